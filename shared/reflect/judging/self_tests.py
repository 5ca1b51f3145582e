"""Tests the agent writes for itself from the statement alone (Reflexion's programming runs), run in the sandbox,
with a trace in the shape of Reflexion's for the evaluator and the reflector. The hidden tests never reach the
agent. `accuracy_on` measures how often the agent's tests are wrong, against a known-correct solution.
"""

from __future__ import annotations

import ast
import doctest
from collections.abc import Callable
from dataclasses import dataclass, field

from ..model.roles import SAMPLING, SEED
from ..records import Step, Verdict, model_step, parse_python
from ..tasks.prompts import write_tests_messages
from ..tasks.task import Task


def parse_asserts(text: str, entry_point: str, limit: int = 6) -> list[str]:
    """The `assert` statements in a reply that call `entry_point`, one per line, inside a code
    block or not (code extraction would drop them: asserts read as example usage).

    Each must parse on its own; duplicates and asserts that never call the function are dropped,
    and at most `limit` are kept, in order."""
    out: list[str] = []
    for line in (text or "").splitlines():
        line = line.strip()
        if not line.startswith("assert ") or line in out:
            continue
        try:
            node = parse_python(line).body[0]
        except (SyntaxError, IndexError):
            continue
        calls = [
            n
            for n in ast.walk(node)
            if isinstance(n, ast.Call) and getattr(n.func, "id", None) == entry_point
        ]
        if isinstance(node, ast.Assert) and calls:
            out.append(line)
        if len(out) == limit:
            break
    return out


def statement_asserts(task: Task, limit: int = 6) -> list[str]:
    """The examples the statement itself gives (`>>> f(x)` and the expected value, as in
    HumanEval's docstrings), as asserts: evidence the task shows the producer anyway, so using
    it reveals nothing hidden. None for a statement without such examples (the course's tasks)."""
    lines = []
    for ex in doctest.DocTestParser().get_examples(task.statement):
        want = []
        for line in ex.want.splitlines():
            if line.strip().startswith(('"""', "'''")):
                break
            want.append(line.strip())
        expected = " ".join(want).strip()
        if expected:
            lines.append(f"assert {ex.source.strip()} == {expected}")
    return parse_asserts("\n".join(lines), task.entry_point, limit)


def write_tests(chat: Callable, task: Task, seed: int | None = SEED) -> tuple[list[str], object]:
    """Ask the model for asserts from the statement alone; (asserts, the reply)."""
    messages = write_tests_messages(task)
    extra = {} if seed is None else {"seed": seed}
    # a few asserts: without a cap a small model can write until its context is full
    reply = chat(messages, role="test_writer", **SAMPLING["test_writer"], max_tokens=300, **extra)
    return parse_asserts(reply.text, task.entry_point), reply


EVIDENCE = ("examples", "self-tests", "examples-or-self-tests")


def gather_evidence(
    chat: Callable, task: Task, source: str, seed: int | None = SEED
) -> tuple[list[str], object | None]:
    """The asserts a strategy or critic may judge drafts by, from `source` (one of `EVIDENCE`): the
    statement's examples (no model call), the agent's own tests (one test-writer call), or the examples
    where the statement has some, else its own tests. Returns (asserts, the test writer's reply or None)."""
    if source not in EVIDENCE:
        raise ValueError(f"evidence must be one of {EVIDENCE}, got {source!r}")
    if source != "self-tests":
        found = statement_asserts(task)
        if found or source == "examples":
            return found, None
    return write_tests(chat, task, seed)


def evidence_step(
    chat: Callable, task: Task, source: str, seed: int | None, steps: list[Step]
) -> list[str]:
    """`gather_evidence`, its test-writer call (if it made one) appended to `steps` as a "test_writer"
    step: the task asked about, the reply, noted "N asserts"."""
    asserts, reply = gather_evidence(chat, task, source, seed)
    if reply is not None:
        asked = [{"content": task.prompt()}]
        note = f"{len(asserts)} asserts"
        steps.append(model_step(len(steps), "test_writer", asked, reply, note=note))
    return asserts


@dataclass
class SelfTestResult:
    """Which self-written asserts a draft passed and failed, with the actual value of each failure."""

    passed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # (assert, what the draft gave)

    @property
    def all_passed(self) -> bool:
        """True when there was at least one assert and every one passed."""
        return bool(self.passed) and not self.failed

    def trace(self) -> str:
        """Reflexion's feedback format, with an empty section written on one line ("Tests failed:
        none"), never a bare header. Lesson 05 section 4: the 1.5B evaluator failed correct drafts
        with a bare header and with "(none)" on a line of its own, and passed them with this."""
        passed = ["Tests passed:", *self.passed] if self.passed else ["Tests passed: none"]
        failed = (
            ["Tests failed:", *(f"{a} # output: {actual}" for a, actual in self.failed)]
            if self.failed
            else ["Tests failed: none"]
        )
        return "\n".join([*passed, "", *failed])


def run_self_tests(task: Task, code: str, asserts: list[str]) -> SelfTestResult:
    """Run each assert as one test step against `code` in the sandbox."""
    result = SelfTestResult()
    if not asserts:
        return result
    outcome = task.run(code, tests="\n".join(asserts) + "\n")
    by_step = outcome.tests + [None] * (
        len(asserts) - len(outcome.tests)
    )  # after a timeout: never ran
    for line, step in zip(asserts, by_step, strict=True):
        if step is not None and step.passed:
            result.passed.append(line)
        else:
            actual = (
                "not run"
                if step is None
                else (step.actual if step.actual is not None else step.error_type or "failed")
            )
            result.failed.append((line, str(actual)))
    return result


def run_tests_step(
    index: int, task: Task, code: str, asserts: list[str]
) -> tuple[SelfTestResult, Step]:
    """Run a draft on the asserts as the run's step `index` (a check): the result and the step.
    An empty draft is not run; it fails with one "(no code)" line, the trace the evaluator sees."""
    res = (
        run_self_tests(task, code, asserts)
        if code.strip()
        else SelfTestResult(failed=[("(no code)", "no code")])
    )
    n, total = len(res.passed), len(asserts)  # accepted when every assert passed, and there was one
    verdict = Verdict(f"{n}/{total} passed", accepted=n == total > 0, passed=n, total=total)
    return res, Step(index, "tests", "check", "\n".join(asserts), res.trace(), verdict=verdict)


def accuracy_on(task: Task, asserts: list[str], correct_code: str) -> float | None:
    """The share of the asserts a known-correct solution passes (None with no asserts): a wrong
    self-test fails the right answer, and would send a correct draft back for repair."""
    if not asserts:
        return None
    res = run_self_tests(task, correct_code, asserts)
    return len(res.passed) / len(asserts)
