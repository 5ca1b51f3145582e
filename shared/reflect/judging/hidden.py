"""Judging drafts against hidden tests (lesson 01's `Attempt`), and judging the judge.

An `Attempt` is one draft for one task with everything later lessons compare: the hidden
test verdict, the first failure (call, expected, actual), the static checks that failed,
and what the draft cost in tokens.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..records import parse_python
from ..tasks.task import Task


@dataclass
class Attempt:
    """One draft for one task, judged by the hidden tests and the static checks."""

    task_id: str
    difficulty: str
    passed: bool
    n_passed: int
    n_tests: int
    first_failure: str  # "" when passed
    static_failures: list[str] = field(default_factory=list)
    code: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0


def judge(task: Task, code: str, prompt_tokens: int = 0, completion_tokens: int = 0) -> Attempt:
    """Run the hidden tests and the static checks on `code` (empty code fails with a reason)."""
    kept = {"code": code, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
    if not code.strip():
        return Attempt(task.id, task.difficulty, False, 0, 0, "no code in the reply", **kept)
    res = task.run(code)
    failure = res.failures[0].describe().removeprefix("FAIL ") if res.failures else res.error or ""
    static = [c.reason for c in task.static_checks(code) if not c.passed]
    verdict = (res.passed, res.n_passed, len(res.tests), "" if res.passed else failure, static)
    return Attempt(task.id, task.difficulty, *verdict, **kept)


def pass_rate(attempts: list[Attempt]) -> float:
    """The share of attempts that passed their hidden tests (0 for none)."""
    return sum(a.passed for a in attempts) / len(attempts) if attempts else 0.0


def judge_the_judge(task: Task, run) -> list[tuple[int, bool, bool]]:
    """For each verdict in a run (a maker-checker `Run`'s reviews): (iteration, the judge accepted,
    hidden tests passed) on the draft that verdict judged."""
    rows, draft, iteration = [], "", 0
    for step in run.steps:
        if step.is_draft:
            draft, iteration = step.code or "", iteration + 1
        elif step.verdict is not None:
            rows.append((iteration, bool(step.verdict.accepted), judge(task, draft).passed))
    return rows


def hidden_fingerprints(task: Task) -> list[str]:
    """Text that only the hidden tests hold: each `assert` line, and each call of the function
    under test in them (`f(10)`, HumanEval's `candidate(...)`), minus what the task's own
    prompt shows anyway. A critic that paraphrases a test ("f(10): expected 3628800") still
    quotes its call."""
    asserts = [
        line.strip() for line in task.tests.splitlines() if line.strip().startswith("assert")
    ]
    names = {task.entry_point, "candidate"}
    try:
        calls = [
            ast.get_source_segment(task.tests, node) or ""
            for node in ast.walk(parse_python(task.tests))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in names
        ]
    except SyntaxError:  # tests that do not parse: their assert lines are all there is to look for
        calls = []
    shown = task.prompt()
    return [f for f in dict.fromkeys(asserts + calls) if f and f not in shown]


def hidden_lines_in_prompts(task: Task, prompts: list[str], replies: list[str]) -> list[str]:
    """The hidden fingerprints (`hidden_fingerprints`) that appear in a prompt sent to the model
    but in none of the model's own replies: text only the harness could have put there, a
    leak. An assert the model wrote itself (equal to a hidden one by chance) and then saw again
    in a trace is not a leak."""
    said, sent = "\n".join(replies), "\n".join(prompts)
    return [f for f in hidden_fingerprints(task) if f in sent and f not in said]
