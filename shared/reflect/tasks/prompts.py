"""Every prompt the course sends, and the builders of its requests, in one place. A strategy's identity records
a fingerprint of the prompts it sends (`fingerprint`): change a text here and the results keyed by the old one no
longer match.
"""

from __future__ import annotations

import hashlib

from .task import Task


def fingerprint(texts: tuple[str, ...]) -> str:
    """Twelve hex digits of the SHA-256 of the texts, in order: the version of the prompts a run sent."""
    return hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:12]


GENERATOR_PROMPT = (
    "You are an expert Python developer. Write clean, well-documented Python code that follows best "
    "practices. When you receive feedback from a reviewer, carefully address each point and provide an "
    "improved version. Output ONLY the Python code (in a code block) — no extra commentary."
)


def generator_messages(prompt: str, system: str = GENERATOR_PROMPT) -> list[dict]:
    """A generator's request: its system prompt, then the task (Reflexion's attempt: the task with
    its memory). The one place every strategy's first draft and fresh sample is built, and the shape
    of every other role's two-message request (a system prompt, then one user message)."""
    return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]


REVIEWER_PROMPT = (
    "You are a meticulous code reviewer. Review the provided Python code for: 1. Correctness — does it "
    "handle edge cases? 2. Readability — clear naming, good structure? 3. Best practices — type hints, "
    "docstrings, error handling? 4. Performance — any obvious inefficiencies? If the code is good enough, "
    "respond with exactly 'APPROVED' as the first word. If it needs improvement, provide specific, "
    "actionable feedback points. Be constructive but rigorous."
)

REFINER_SYSTEM = (
    "You are an expert Python developer improving your previous attempt. Use the critic's feedback: fix each "
    "issue it names, keep what already works, and do not start over. Output only the full improved code, in one Python code block."
)


def refine_request(task: Task, previous: str, feedback: str) -> str:
    """The refiner's user message: the task, the previous attempt and the critic's feedback."""
    return (
        f"Task:\n{task.prompt()}\n\nYour previous attempt:\n```python\n{previous}```\n\n"
        f"Critic feedback:\n{feedback}\n\nImprove the previous attempt using this feedback; do not start over."
    )


CRITIC_PROMPT = (
    "You are a strict code critic. Judge the code against the task and these criteria: {criteria}. "
    "Reply with a JSON object only: score (integer 1-10, 10 means nothing left to fix), issues (list of "
    "concrete problems, most important first), strengths (list), suggestion (the single most important fix)."
)

TEXT_CRITIC_PROMPT = (
    "You are a strict reviewer of written answers. Judge the answer against the question and these criteria: "
    "{criteria}. Reply with a JSON object only: score (integer 1-10, 10 means nothing left to fix), issues (list "
    "of concrete problems, most important first), strengths (list), suggestion (the single most important fix)."
)

VOTER_PROMPTS = (
    CRITIC_PROMPT,
    CRITIC_PROMPT.replace(
        "strict code critic", "senior engineer reviewing a pull request, focused on edge cases"
    ),
    CRITIC_PROMPT.replace(
        "strict code critic", "security-minded reviewer who also checks correctness"
    ),
)


def review_request(task: Task | str, draft: str) -> str:
    """A critic's request: the task (or, in a plain-text domain, the question) and the draft to judge."""
    if isinstance(task, str):  # a plain-text domain: the question and the answer
        return f"Question:\n{task}\n\nAnswer to judge:\n{draft}"
    return f"Task:\n{task.prompt()}\n\nCode to judge:\n```python\n{draft}\n```"


def critic_repair_request(error: str) -> str:
    """What a critic is told after a reply that was not a usable critique (`error` says why)."""
    return f"That reply was not usable: {error}. Reply with the JSON object only."


WRITE_TESTS_SYSTEM = (
    "You are a careful Python tester. Given a function's specification, write unit tests for it as plain "
    "`assert` statements, one per line, each calling the function with concrete arguments and comparing with "
    "the exact expected result. Cover the examples in the specification and one or two edge cases. Output only "
    "the asserts, in one Python code block."
)


def write_tests_messages(task: Task) -> list[dict]:
    """The test writer's request: asserts for the task's function from its statement alone."""
    return generator_messages(
        f"{task.prompt()}\n\nWrite the asserts for `{task.entry_point}`.", WRITE_TESTS_SYSTEM
    )


EVALUATOR_SYSTEM = (
    "You evaluate a Python solution against its task and the results of the tests run on it. Reply with one JSON "
    'object and nothing else: {"score": <0.0 to 1.0>, "verdict": "pass" or "fail", "specific_issues": [<strings>], '
    '"missing_elements": [<strings>]}. A failed test means the verdict is "fail".'
)


def evaluator_messages(system: str, task: Task, code: str, trace: str) -> list[dict]:
    """The evaluator's request: the task, the code and the trace of the agent's own tests."""
    return generator_messages(
        f"Task:\n{task.prompt()}\n\nSolution:\n```python\n{code}```\n\n{trace}", system
    )


REFLECTOR_SYSTEM = (
    "You failed a programming task. In two to four sentences, say what went wrong, why, and exactly what to do "
    "differently next time. Be specific: name the input that failed and the change to make (for example 'add the "
    "missing empty-list check before indexing'), never general advice such as 'improve quality'. Do not write code: describe the change in words."
)


def reflection_messages(task: Task, code: str, trace: str, issues: str) -> list[dict]:
    """The reflector's request: the task, the failed attempt, its tests' trace, the evaluator's issues."""
    return generator_messages(
        f"Task:\n{task.prompt()}\n\nYour attempt:\n```python\n{code}```\n\n{trace}\n\n"
        f"Evaluator's issues: {issues}",
        REFLECTOR_SYSTEM,
    )


def attempt_request(task: Task, last_code: str | None = None, reflections: list[str] = ()) -> str:
    """A Reflexion attempt's user message: the task, then (when given) the last attempt, which did
    not pass, and the lessons remembered from earlier attempts, most recent last."""
    parts = [task.prompt()]
    if last_code:
        parts.append(f"Your previous attempt, which did not pass:\n```python\n{last_code}```")
    if reflections:
        parts.append(
            "Lessons from your earlier attempts (most recent last):\n"
            + "\n".join(f"- {r}" for r in reflections)
        )
    return "\n\n".join(parts)


def repair_request(task: Task, failed: list[tuple[str, str]], code: str | None = None) -> str:
    """A sample's user message after a failed first draft: the task and the checks it failed (each
    assert, then what the draft returned or raised); with `code`, the draft itself as well. With no failed
    check there is nothing true to report ("failed these checks:" over nothing): a ValueError, never a prompt."""
    if not failed:
        raise ValueError(
            "repair_request needs at least one failed check: a draft that failed none gets the plain task"
        )
    checks = "\n".join(f"{check} # output: {actual}" for check, actual in failed)
    if code is None:
        return (
            f"{task.prompt()}\n\nAn earlier solution failed these checks (each check, then what the solution "
            f"returned or raised):\n{checks}\n\nWrite a correct solution."
        )
    return (
        f"{task.prompt()}\n\nYour previous attempt:\n```python\n{code}```\n\nIt failed these checks (each check, "
        f"then what it returned or raised):\n{checks}\n\nFix the attempt."
    )


def refine_messages(task: Task, previous: str, feedback: str) -> list[dict]:
    """A refiner's request (lesson 03's textbook revision): its system prompt, then the task, the previous draft
    and the critic's feedback. The one place `scored_reflection`'s refiner and the revise step `refine` build it."""
    return generator_messages(refine_request(task, previous, feedback), REFINER_SYSTEM)


def fresh_request(task: Task, feedback: str) -> str:
    """A fresh revision's user message (lesson 03's `fresh`): the task and the checks' feedback on an earlier
    draft, never the draft."""
    return f"{task.prompt()}\n\nAn earlier solution was checked:\n{feedback}\n\nWrite a correct solution."


def critique_request(task: Task, code: str, critique: str) -> str:
    """The critique arm's user message: the task, the first draft, and the critique written of it
    (worded as `repair_request` words the checks, so the two arms differ in the evidence only)."""
    return (
        f"{task.prompt()}\n\nYour previous attempt:\n```python\n{code}```\n\nA reviewer wrote this critique "
        f"of it:\n{critique}\n\nFix the attempt."
    )
