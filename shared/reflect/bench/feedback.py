"""`python -m reflect.bench.feedback`: lesson 06's experiment, feedback or more tries, recorded in pieces.

    python -m reflect.bench.feedback --replicates 2 --concurrency 2    # all 164 HumanEval problems
    python -m reflect.bench.feedback --report                          # the stated analysis, no model

First every problem's one first draft, its evidence and its check (and, after a failure, the critique),
one request at a time; then, after each failed first draft, every arm (`reflect.strategies.feedback`)
and replicate, `--concurrency` requests at a time, replicate by replicate. Each finished piece is one
line of `results/06_feedback_164.jsonl`: stop it at any moment and the same command resumes; a larger
`--replicates` adds replicates. `--limit N` takes HumanEval's first N problems (a trial run: write it
to another file with `--out`). Any backend, as for `python -m reflect.bench`.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ..evaluation import feedback
from ..model.config import repo_root
from ..tasks.task import humaneval_tasks

DEFAULT_OUT = Path("results") / "06_feedback_164.jsonl"
# the pilot (results/06_feedback.jsonl, HumanEval/0-79, two requests at a time): samples after a failed first
# draft took 26 s each with two in flight, 13 s of wall time each, and 3.5 of them were drawn per run on average
PILOT_WALL_S_PER_SAMPLE, PILOT_SAMPLES_PER_RUN = 13.2, 3.5


def estimate(jobs: int, concurrency: int) -> str:
    """The time the arm runs still to do should take, from the pilot's figures (two requests at a time)."""
    hours = (
        jobs * PILOT_SAMPLES_PER_RUN * PILOT_WALL_S_PER_SAMPLE * (2 / max(1, concurrency)) / 3600
    )
    return (
        f"{jobs} arm runs to record: about {hours:.1f} h of model time at {concurrency} at a time "
        f"(the pilot's {PILOT_SAMPLES_PER_RUN} samples per run, {PILOT_WALL_S_PER_SAMPLE:.0f} s each at two at a time)"
    )


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(
        prog="python -m reflect.bench.feedback",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--replicates",
        type=int,
        default=2,
        help="replicates of the after-failure phase (default 2: docs/feedback_experiment.md says why)",
    )
    ap.add_argument(
        "--limit", type=int, default=None, help="HumanEval's first N problems (default: all 164)"
    )
    ap.add_argument(
        "--concurrency",
        type=int,
        default=2,
        help="requests at once after the first drafts (default 2)",
    )
    ap.add_argument(
        "--out", type=Path, default=None, help=f"the results file (default: {DEFAULT_OUT})"
    )
    ap.add_argument(
        "--report", action="store_true", help="print the analysis of the file and run nothing"
    )
    ap.add_argument(
        "--starts-only",
        action="store_true",
        help="record the first drafts only, then print the estimate",
    )
    args = ap.parse_args(argv)
    out = args.out or repo_root() / DEFAULT_OUT
    tasks = humaneval_tasks()[: args.limit]
    if not args.report:
        from ..runtime.connect import connect

        conn = connect()
        meta = {"model": conn.model, "concurrency": args.concurrency}
        start = time.perf_counter()
        print(
            f"first drafts of {len(tasks)} HumanEval problems, one request at a time -> {out}",
            file=sys.stderr,
        )
        feedback.record_starts(tasks, conn.chat, out, meta=meta)
        print(
            estimate(len(feedback.arm_jobs(tasks, out, args.replicates)), args.concurrency),
            file=sys.stderr,
        )
        if not args.starts_only:
            feedback.record_arms(
                tasks, conn.chat, out, args.replicates, args.concurrency, meta=meta
            )
        print(f"this call took {time.perf_counter() - start:.0f} s", file=sys.stderr)
    try:
        table, replicates = feedback.rows(out, args.replicates)
    except (ValueError, FileNotFoundError) as err:
        print(f"no analysis yet: {err}")
        return 1
    missing = feedback.incomplete(out, replicates)
    if missing:
        print(
            f"left out while the recording is under way: {len(missing)} problems without all arms in "
            f"{replicates} replicate(s)"
        )
    print(feedback.format_report(table, replicates))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
