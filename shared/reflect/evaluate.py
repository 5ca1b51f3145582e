"""Judging drafts against hidden tests, and the one-shot baseline.

An `Attempt` is one draft for one task with everything later lessons compare: the hidden
test verdict, the first failure (call, expected, actual), the static checks that failed,
and what the draft cost in tokens.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .extract import extract_code
from .loops import GENERATOR_PROMPT, ChatFn
from .tasks import Task


@dataclass
class Attempt:
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

    def as_dict(self) -> dict:
        return asdict(self)


def judge(task: Task, code: str, prompt_tokens: int = 0, completion_tokens: int = 0) -> Attempt:
    """Run the hidden tests and the static checks on `code` (empty code fails with a reason)."""
    if not code.strip():
        return Attempt(task.id, task.difficulty, False, 0, 0, "no code in the reply", [], code,
                       prompt_tokens, completion_tokens)
    res = task.run(code)
    first = "" if res.passed else (res.failures[0].describe().removeprefix("FAIL ") if res.failures else res.error or "")
    static = [c.reason for c in task.static_checks(code) if not c.passed]
    return Attempt(task.id, task.difficulty, res.passed, res.n_passed, len(res.tests), first, static, code,
                   prompt_tokens, completion_tokens)


def one_shot(chat: ChatFn, task: Task, system_prompt: str = GENERATOR_PROMPT) -> Attempt:
    """One call, no review: the baseline every later lesson compares against."""
    _, reply, code = one_shot_call(chat, task, system_prompt)
    return judge(task, code, reply.prompt_tokens, reply.completion_tokens)


def one_shot_call(chat: ChatFn, task: Task, system_prompt: str = GENERATOR_PROMPT) -> tuple[list[dict], object, str]:
    """The one generator call of one-shot: (messages sent, reply, extracted code)."""
    prompt = task.prompt()
    if not prompt.strip():
        raise ValueError(f"Task {task.id!r} has a blank statement.")
    messages = [{"role": "system", "content": system_prompt}, {"role": "user", "content": prompt}]
    reply = chat(messages, role="generator")
    return messages, reply, extract_code(reply.text, task.entry_point).code


def pass_rate(attempts: list[Attempt]) -> float:
    return sum(a.passed for a in attempts) / len(attempts) if attempts else 0.0


def judge_the_judge(task: Task, result) -> list[tuple[int, bool, bool]]:
    """For each review in a maker-checker result: (iteration, reviewer approved, hidden tests passed)
    on the draft that review judged."""
    rows = []
    drafts = {t.iteration: t.code or "" for t in result.turns if t.role == "generator"}
    for review in result.reviews:
        rows.append((review.iteration, bool(review.approved), judge(task, drafts.get(review.iteration, "")).passed))
    return rows
