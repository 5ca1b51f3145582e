"""What grading a class costs: N submissions of one lesson, each the learner copy with the solutions' answers,
graded by `course.py grade`'s grader (course_grading: nbgrader in replay, one learner at a time). Prints the wall
time, the CPU time of the whole run (children included), the time per learner and the marks; appends the result to
benchmarks/results/grading.jsonl. Rerunnable; not a pass/fail test.

    python benchmarks/bench_grading.py --learners 30 --lesson 02_maker_checker
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import tempfile
import time
from pathlib import Path

import course_grading as grade

ROOT = Path(__file__).resolve().parents[1]


def solved_copy(lesson: str) -> dict:
    nb = json.loads((ROOT / "notebooks" / f"{lesson}.ipynb").read_text(encoding="utf-8"))
    sol = json.loads((ROOT / "solutions" / f"{lesson}.ipynb").read_text(encoding="utf-8"))
    answers = {
        c["metadata"]["reflect"]["key"]: "".join(c["source"])
        for c in sol["cells"]
        if c["metadata"].get("reflect", {}).get("key")
    }
    for cell in nb["cells"]:
        gid = cell["metadata"].get("nbgrader", {}).get("grade_id", "")
        if gid.startswith("answer_"):
            cell["source"] = answers[gid.removeprefix("answer_").replace("-", ".")]
    return nb


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--learners", type=int, default=30)
    ap.add_argument("--lesson", default="02_maker_checker")
    args = ap.parse_args()
    nb = json.dumps(solved_copy(args.lesson))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "class"
        for i in range(args.learners):
            (folder / f"learner{i:02d}").mkdir(parents=True)
            (folder / f"learner{i:02d}" / f"{args.lesson}.ipynb").write_text(nb, encoding="utf-8")
        start, cpu0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        marks = grade.grade(folder, Path(tmp) / "out", timeout=900, cell_timeout=120)
        wall, cpu1 = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    passed = sum(m.passed for m in marks)
    result = {
        "when": time.strftime("%Y-%m-%d %H:%M"),
        "lesson": args.lesson,
        "learners": args.learners,
        "wall_s": round(wall, 1),
        "cpu_s_children": round(cpu, 1),
        "per_learner_s": round(wall / args.learners, 1),
        "marks": len(marks),
        "passed": passed,
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
    }
    print(
        f"{args.learners} submissions of {args.lesson}: {wall:.0f} s wall ({wall / args.learners:.1f} s a learner), "
        f"{cpu:.0f} s CPU; {passed} of {len(marks)} marks passed"
    )
    with (ROOT / "benchmarks" / "results" / "grading.jsonl").open("a", encoding="utf-8") as f:
        f.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
