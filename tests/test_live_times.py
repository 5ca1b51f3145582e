"""Each lesson has one live-time figure: its header states the seconds the README's table gives for it, and
both are the latest course-run benchmark's (benchmarks/results/course_run.json, `python
benchmarks/bench_course_run.py`: the whole course live in a fresh clone, on 2 cores)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^\| \[(\d\d\w?) · [^\]]*\]\(notebooks/(\w+)\.ipynb\) \|.*\| (\d+) s \|$", re.M)
HEADER = re.compile(r"\*\*Time to run:\*\*[^\n]*; live, (\d+) s on 2 cores")


def readme_times() -> dict[str, int]:
    return {name: int(s) for _, name, s in ROW.findall((ROOT / "README.md").read_text())}


def header_time(name: str) -> int | None:
    cells = json.loads((ROOT / "solutions" / f"{name}.ipynb").read_text())["cells"]
    found = HEADER.search("".join(cells[0]["source"]))
    return int(found[1]) if found else None


def test_each_lessons_header_readme_row_and_benchmark_give_one_live_time():
    bench = json.loads((ROOT / "benchmarks" / "results" / "course_run.json").read_text())["lessons"]
    readme = readme_times()
    assert sorted(readme) == sorted(bench), "the README's table lists every benchmarked lesson"
    for name, row in bench.items():
        assert readme[name] == row["seconds"], (name, readme[name], row["seconds"])
        assert header_time(name) == row["seconds"], (name, header_time(name), row["seconds"])
