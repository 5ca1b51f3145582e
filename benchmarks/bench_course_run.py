"""The whole course live, as a new learner runs it: `make run` in a fresh clone, default settings.

    python benchmarks/bench_course_run.py                 # all lessons; writes benchmarks/results/course_run.json
    python benchmarks/bench_course_run.py --only 06       # one lesson (written to course_run_06.json)
    COURSE_LOCAL_MODEL=qwen2.5-coder-0.5b python benchmarks/bench_course_run.py --out benchmarks/results/course_run_0.5b.json
    COURSE_FULL=1 python benchmarks/bench_course_run.py --only 06 --out benchmarks/results/course_run_full_06.json --keep build/full_06

Steps, each timed: clone this repository's HEAD into a temporary folder; `make install` and
`make model` there (set-up, not counted in the lessons' times); empty the live request cache,
as on a new machine; `make run`; then `tools/compare_runs.py` in the clone, which must find no
model output that differs from the committed notebooks. Per lesson it records the wall time
(from `make run`'s own progress lines), the model calls and how many the request cache
answered (from each executed lesson's last line), and per cell (`COURSE_CELL_LOG`, written by
`course_runtime.client` in each lesson's kernel) the wall seconds, model calls, tokens and model
seconds: `cells` in the result, the slowest printed. The goal (issue "The live course in 15
minutes"): at most 15 minutes in all and 3 for any one lesson. Run it on an otherwise idle
machine: a second CPU-heavy process slows the model several-fold.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import nbformat

from course_runtime.model_file import DEFAULT, ModelFileError, local_model

ROOT = Path(__file__).resolve().parents[1]
LESSON_LINE = re.compile(
    r"^\[\d+/\d+\] (?P<name>\S+\.ipynb) on the \S+ model: (?P<status>ok|FAILED)(?: \((?P<secs>\d+) s\))?",
    re.M,
)
LEDGER = re.compile(
    r"This run: (?P<calls>[\d,]+) model calls?(?: \((?P<cached>\d+) answered from the cache, "
    r"(?P<cached_tokens>[\d,]+) tokens\))?, (?P<tokens>[\d,]+) tokens"
)


def sh(cmd: list[str], cwd: Path, env: dict | None = None) -> tuple[int, str, float]:
    start = time.perf_counter()
    p = subprocess.run(
        cmd, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True
    )
    return p.returncode, p.stdout + p.stderr, time.perf_counter() - start


def ledger(path: Path) -> dict:
    """Model calls and cache answers from an executed lesson's "This run: ..." line."""
    nb = nbformat.read(path, as_version=4)
    for cell in reversed(nb.cells):
        for out in cell.get("outputs", []):
            m = LEDGER.search(out.get("text", ""))
            if m:
                return {
                    g: int((m[g] or "0").replace(",", ""))
                    for g in ("calls", "tokens", "cached", "cached_tokens")
                }
    return {}


def cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def shown(path: Path) -> str:
    """A results path as printed: relative to the repository when inside it, however given; else absolute."""
    full = path.resolve()
    return str(full.relative_to(ROOT)) if full.is_relative_to(ROOT) else str(full)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", default=None, help="one lesson, as for make run NB=..")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument(
        "--keep", type=Path, default=None, help="copy the executed lessons into this folder"
    )
    args = ap.parse_args()
    out = (
        args.out
        or ROOT
        / "benchmarks"
        / "results"
        / f"course_run{'_' + args.only if args.only else ''}.json"
    )
    name = os.environ.get("COURSE_LOCAL_MODEL")
    try:
        model = (
            local_model(name) if name else DEFAULT
        ).label  # the local model make run's server loads
    except ModelFileError as err:
        print(err, file=sys.stderr)
        return 2
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="course-run-") as tmp:
        clone = Path(tmp) / "course"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        rc, log, setup_s = sh(["make", "model"], clone)  # install and model: a new learner's set-up
        if rc:
            print(log[-3000:], file=sys.stderr)
            return rc
        sh(
            [
                str(clone / ".venv" / "bin" / "python"),
                "-m",
                "course_runtime.response_cache",
                "clear",
            ],
            clone,
        )  # a new machine's empty cache
        cell_log = Path(tmp) / "cells.jsonl"
        rc, log, run_s = sh(
            ["make", "run", *([f"NB={args.only}"] if args.only else [])],
            clone,
            env={"COURSE_CELL_LOG": str(cell_log)},
        )
        cells = (
            [json.loads(line) for line in cell_log.read_text().splitlines()]
            if cell_log.exists()
            else []
        )
        lessons = {}
        for m in LESSON_LINE.finditer(log):
            name = m["name"].removesuffix(".ipynb")
            executed = clone / "build" / "run" / m["name"]
            lessons[name] = {
                "status": m["status"],
                "seconds": int(m["secs"]) if m["secs"] else None,
                **(ledger(executed) if executed.exists() else {}),
            }
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for executed in (clone / "build" / "run").glob("*.ipynb"):
                shutil.copy2(executed, args.keep / executed.name)
        crc, compared, _ = sh(
            [
                str(clone / ".venv" / "bin" / "python"),
                "tools/compare_runs.py",
                *(["--only", args.only] if args.only else []),
            ],
            clone,
        )
    differ = [line for line in compared.splitlines() if " code cell " in line]
    result = {
        "date": date.today().isoformat(),
        "commit": commit,
        "cpu": cpu(),
        "cores": os.cpu_count(),
        "model": model,
        "full": os.environ.get("COURSE_FULL", "") == "1",
        "setup_s": round(setup_s),
        "run_s": round(run_s),
        "lessons": lessons,
        "total_s": sum(v["seconds"] or 0 for v in lessons.values()),
        "calls": sum(v.get("calls", 0) for v in lessons.values()),
        "tokens": sum(v.get("tokens", 0) for v in lessons.values()),
        "cached": sum(v.get("cached", 0) for v in lessons.values()),
        "cached_tokens": sum(v.get("cached_tokens", 0) for v in lessons.values()),
        "differing_cells": differ,
        "make_run_rc": rc,
        "compare_rc": crc,
        "cells": [
            c for c in cells if c["wall_s"] >= 1 or c["calls"]
        ],  # every cell that took a second or a call
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    for name, v in lessons.items():
        print(
            f"{name:<28}{v['status']:<7}{v['seconds'] or 0:>6} s{v.get('calls', 0):>6} calls{v.get('cached', 0):>5} cached"
        )
    print("the slowest cells:")
    for c in sorted(result["cells"], key=lambda c: -c["wall_s"])[:12]:
        print(
            f"  {c['lesson']:<26}{c['wall_s']:>7.0f} s{c['calls']:>4} calls ({c['cached']} cached){c['tokens']:>7} tokens  "
            f"{c['cell'][:60]}"
        )
    print(
        f"total {result['total_s']} s ({result['total_s'] / 60:.1f} min); the cache answered {result['cached']} of "
        f"{result['calls']} calls ({result['cached_tokens']:,} of {result['tokens']:,} tokens); {len(differ)} cells "
        f"differ from the committed notebooks -> {out.relative_to(ROOT)}"
    )
    return 1 if rc or crc else 0


if __name__ == "__main__":
    sys.exit(main())
