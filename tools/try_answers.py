"""Try a set of answers on a lesson's checks, each in the lesson's own kernel, as nbval grades a planted one.

    python tools/try_answers.py 02 answers.json [--out results.json]

`answers.json` maps an exercise key to its answers, each the source of the exercise cell as a learner writes it
(it defines the names the check cell passes) and whether it is right:

    {"02.1": [{"kind": "wrong", "why": "finds APPROVED anywhere", "source": "def approved(review): ..."},
              {"kind": "right", "why": "a regular expression", "source": "..."}], ...}

The solved lesson runs in replay in one kernel, as the class grader runs it (course_grading: a request the
recording lacks gets an empty reply); after each exercise's check cell, each answer of that exercise runs from
the solution's state (tests/nbval_lessons.py: snapshot, answer, check cell, roll back). An answer whose own cell
raises is reported as broken, not graded: the solution's names would still be in place. A right answer that
sends a request the recording lacks (a prompt worded anew) gets empty replies, and fails. Exit status 1 when a wrong
answer passes, a right one fails, or an answer is broken. tests/answers/ holds the fresh learner reads' answers
(tests/test_answers.py tries them); maintainers try their own set the same way.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ERROR = re.compile(r"^\w*(Error|Exception|Exit|Interrupt)\w*: ", re.M)  # how run_in reports a raise


def _lessons_plugin():  # noqa: ANN202 - tests/nbval_lessons.py, whose snapshot and roll-back nbval uses
    spec = importlib.util.spec_from_file_location(
        "nbval_lessons", ROOT / "tests" / "nbval_lessons.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Kernel:
    """A jupyter_client kernel client in the shape `run_in` drives (nbval's kernel)."""

    def __init__(self, client) -> None:  # noqa: ANN001
        self.client = client

    def execute_cell_input(self, source: str, allow_stdin: bool = False) -> str:
        return self.client.execute(source, allow_stdin=allow_stdin)

    def await_reply(self, msg_id: str, timeout: float) -> dict:
        while True:
            reply = self.client.get_shell_msg(timeout=timeout)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply

    def get_message(self, stream: str, timeout: float) -> dict:
        return self.client.get_iopub_msg(timeout=timeout)


def try_answers(lesson: str, answers: dict[str, list[dict]]) -> list[dict]:
    """Each answer's verdict: its key, kind, why, whether its check passed it, whether its own cell raised, and
    the check's first words."""
    from jupyter_client.manager import start_new_kernel

    plugin = _lessons_plugin()
    path = next((ROOT / "solutions").glob(f"{lesson}_*.ipynb"))
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    unknown = set(answers) - {c["metadata"].get("reflect", {}).get("key") for c in cells}
    if unknown:
        raise SystemExit(f"lesson {lesson} has no exercise {sorted(unknown)}")
    env = {
        **os.environ,
        "COURSE_BACKEND": "replay",
        "COURSE_REPLAY_MISS": "empty",
    }  # as the class grader runs
    manager, client = start_new_kernel(
        kernel_name="python3", cwd=str(path.parent), env=env, startup_timeout=180
    )
    kernel, results, key = _Kernel(client), [], None
    try:
        for cell in cells:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            plugin.run_in(kernel, source)
            meta = cell["metadata"].get("reflect", {})
            if "placeholder" in meta:
                key = meta["key"]
                continue
            for answer in (
                answers.get(key, []) if key else []
            ):  # the cell after an exercise is its check
                plugin.run_in(kernel, plugin.SNAPSHOT)
                defined = plugin.run_in(kernel, answer["source"])
                verdict = plugin.run_in(kernel, source).strip()
                results.append({"key": key, "kind": answer["kind"], "why": answer.get("why", ""),
                                "passed": verdict.startswith("✅"), "broken": bool(ERROR.search(defined)),
                                "verdict": verdict[:400]})  # fmt: skip
                plugin.run_in(kernel, plugin.RESTORE)
            key = None
    finally:
        manager.shutdown_kernel(now=True)
    return results


def failures(results: list[dict]) -> list[dict]:
    """The answers graded against their kind: a wrong one passed, a right one failed, or one that raised."""
    return [r for r in results if r["broken"] or r["passed"] != (r["kind"] == "right")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lesson", help="the lesson's number: 00, 01, ..., 03b, ..., 06")
    parser.add_argument("answers", type=Path, help="a JSON file of answers by exercise key")
    parser.add_argument("--out", type=Path, help="write every verdict here, as JSON")
    args = parser.parse_args(argv)
    results = try_answers(args.lesson, json.loads(args.answers.read_text(encoding="utf-8")))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    for kind in ("wrong", "right"):
        mine = [r for r in results if r["kind"] == kind]
        print(f"{kind} answers passed: {sum(r['passed'] for r in mine)} of {len(mine)}")
    for r in failures(results):
        said = "raised in its own cell" if r["broken"] else ("passed" if r["passed"] else "failed")
        print(f"  {r['key']} {r['kind']} answer {said}: {r['why']}\n    {r['verdict'][:200]!r}")
    return 1 if failures(results) else 0


if __name__ == "__main__":
    sys.exit(main())
