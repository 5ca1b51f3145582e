"""Lesson 05's experiment: Reflexion's four memory modes against one-shot, run resumably.

Every strategy of `reflect.strategies.reflexion.memory_experiment()` on every task, one JSON
line per finished run (`reflect.evaluation.runner.run_bench`): interrupt it at any time and the
same command resumes, skipping finished runs. Identical seeded requests (the first attempt
and the self-written tests, which every memory mode shares) are asked once (CachedChat).

    python benchmarks/bench_reflexion.py                          # the 18 course tasks
    python benchmarks/bench_reflexion.py --tasks humaneval --limit 20 --out results/05_humaneval.jsonl
    python benchmarks/bench_reflexion.py --concurrency 2           # two requests at once (server slots)

Uses the configured backend (COURSE_BACKEND: local by default, or openai). Lesson 05 reads
the course-task file; a live run of the lesson writes its own copy under build/results/.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from course_bench import task_sample
from course_runtime import connect
from reflect.evaluation.runner import run_bench
from reflect.model.cache import CachedChat
from reflect.strategies.reflexion import memory_experiment

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tasks", choices=("course", "humaneval"), default="course")
    ap.add_argument("--limit", type=int, default=None, help="the first N tasks")
    ap.add_argument("--attempts", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "05_memory_modes.jsonl")
    args = ap.parse_args()
    tasks = task_sample(args.tasks, args.limit)
    conn = connect()
    start = time.perf_counter()
    runs = run_bench(
        memory_experiment(args.attempts),
        tasks,
        CachedChat(conn.chat, seeded=True),
        args.out,
        concurrency=args.concurrency,
        meta={"model": conn.model, "concurrency": args.concurrency},
    )
    print(f"{len(runs)} runs in {args.out} ({time.perf_counter() - start:.0f} s this call)")
    for name in dict.fromkeys(r.strategy for r in runs):
        mine = [r for r in runs if r.strategy == name]
        print(
            f"{name:<28} {sum(bool(r.passed) for r in mine):>2}/{len(mine)} pass, {sum(r.tokens for r in mine):>6} tokens"
        )


if __name__ == "__main__":
    main()
