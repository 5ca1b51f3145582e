"""Lesson 02's loop, maker-checker: the answer key of the loop the learner writes in lesson 02.

A Code Generator and a Code Reviewer alternate on one shared thread until the review is APPROVED
or `max_iterations` rounds. What it adds to the learner's loop: docs/package.md, "The modules in
detail".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..judging.controller import over_budget
from ..judging.sentinel import ApprovalRule, strict_sentinel
from ..model.llm import ModelError
from ..model.roles import SAMPLING, SEED
from ..records import ChatFn, Run, Step, Stop, Verdict, model_step
from ..tasks import prompts
from ..tasks.extract import extract_code
from ..tasks.prompts import GENERATOR_PROMPT, REVIEWER_PROMPT
from ..tasks.task import Task
from .base import execute, with_sampling

MAX_ITERATIONS = 4
_PERSPECTIVES = ("shared", "own")


def _thread_of(task: str, steps: Sequence[Step]) -> list[dict]:
    """The shared thread: the task, then every turn as `[Role]: reply` from an assistant."""
    turns = [{"role": "assistant", "content": f"[{s.role.title()}]: {s.reply}"} for s in steps]
    return [{"role": "user", "content": task}, *turns]


def _role_view(task: str, steps: Sequence[Step], role: str) -> list[dict]:
    """The thread as `role` sees it under perspective "own": its turns as assistant, the other
    role's as user (no prefix), consecutive user messages joined into one."""
    view = [{"role": "user", "content": task}]
    for s in steps:
        kind = "assistant" if s.role == role else "user"
        if view[-1]["role"] == kind == "user":
            view[-1] = {"role": "user", "content": f"{view[-1]['content']}\n\n{s.reply}"}
        else:
            view.append({"role": kind, "content": s.reply})
    return view


def maker_checker(
    chat: ChatFn,
    task: str,
    *,
    max_iterations: int = MAX_ITERATIONS,
    is_approved: ApprovalRule = strict_sentinel,
    token_budget: int | None = None,
    generator_prompt: str = GENERATOR_PROMPT,
    reviewer_prompt: str = REVIEWER_PROMPT,
    entry_point: str | None = None,
    trim: Callable[[list[dict]], list[dict]] | None = None,
    perspective: str = "shared",
    task_id: str = "task",
    name: str = "maker-checker",
) -> Run:
    """Run the generator/reviewer loop on `task` with `chat(messages, role=...)`; return its Run:
    a step a turn, the last draft with code, and why it stopped (accepted, max_iterations,
    token_budget or provider_error). `trim` maps the thread to the messages sent."""
    _check(task, max_iterations, token_budget, perspective)
    steps: list[Step] = []

    def turn(role: str, system: str) -> Step:
        seen = _role_view(task, steps, role) if perspective == "own" else _thread_of(task, steps)
        messages = [{"role": "system", "content": system}, *(trim(seen) if trim else seen)]
        reply = chat(messages, role=role)
        if role == "generator":
            draft = extract_code(reply.text, entry_point)
            note = None if draft.found else draft.reason
            return model_step(len(steps), role, messages, reply, draft.code, note=note)
        ok = bool((reply.text or "").strip()) and is_approved(reply.text)
        verdict = Verdict("approved" if ok else "not approved", ok)
        note = None if (reply.text or "").strip() else "empty review"
        return model_step(len(steps), role, messages, reply, verdict=verdict, note=note)

    def finish(stop: Stop, error: str | None = None) -> Run:
        drafts = [s.code for s in steps if s.role == "generator" and (s.code or "").strip()]
        last = drafts[-1] if drafts else ""  # the last draft with code
        kept = "the last draft (maker-checker keeps the last version)"
        return Run(
            strategy=name,
            task_id=task_id,
            final_code=last,
            stop=stop,
            steps=tuple(steps),
            chosen=kept,
            error=error,
        )

    for _ in range(max_iterations):
        for role, system in (("generator", generator_prompt), ("reviewer", reviewer_prompt)):
            used = sum(s.prompt_tokens + s.completion_tokens for s in steps)
            costs = [s.prompt_tokens + s.completion_tokens for s in steps if s.role == role]
            if over_budget(used, max(costs, default=0), token_budget):
                return finish(Stop.TOKEN_BUDGET)
            try:
                steps.append(turn(role, system))
            except ModelError as err:
                return finish(Stop.PROVIDER_ERROR, f"{role} call failed: {err}")
        if steps[-1].verdict.accepted:
            return finish(Stop.ACCEPTED)
    return finish(Stop.MAX_ITERATIONS)


def _check(task: str, max_iterations: int, token_budget: int | None, perspective: str) -> None:
    if perspective not in _PERSPECTIVES:
        raise ValueError(f"perspective must be one of {_PERSPECTIVES}, got {perspective!r}")
    if not task or not task.strip():
        raise ValueError("The task is blank: give the generator something to write.")
    if max_iterations < 1:
        raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
    if token_budget is not None and token_budget < 1:
        raise ValueError(f"token_budget must be at least 1 token, got {token_budget}")


def keep_last(n: int) -> Callable[[list[dict]], list[dict]]:
    """A thread trimmer: the task plus the last `n` messages (drop older rounds)."""
    if n < 1:
        raise ValueError("keep at least one message besides the task")
    return lambda thread: thread[:1] + thread[1:][-n:]


@dataclass
class MakerChecker:
    """Lesson 02: generator and reviewer on one shared thread until APPROVED or the budget, sampled
    as lesson 02 does (temperature 0, seed 42; the generator may write 512 tokens, the reviewer 300)."""

    max_iterations: int = MAX_ITERATIONS
    options: dict = field(default_factory=dict)  # any other keyword of maker_checker()
    temperature: float = SAMPLING["generator"]["temperature"]  # the reviewer's too
    seed: int | None = SEED
    generator_max_tokens: int = SAMPLING["generator"]["max_tokens"]
    reviewer_max_tokens: int = SAMPLING["reviewer"]["max_tokens"]
    judge_hidden: bool = True
    name: str = "maker-checker"
    ROLES = ("generator", "reviewer")

    def prompts(self) -> tuple[str, ...]:
        """Lesson 02's generator and reviewer prompts."""
        return prompts.GENERATOR_PROMPT, prompts.REVIEWER_PROMPT

    def run(self, task: Task, chat: ChatFn) -> Run:
        """Run the loop on the task's prompt and return its Run."""
        sampled = with_sampling(
            chat,
            self.temperature,
            self.seed,
            lambda role: (
                self.generator_max_tokens if role == "generator" else self.reviewer_max_tokens
            ),
        )
        return execute(
            self,
            task,
            lambda: maker_checker(
                sampled,
                task.prompt(),
                max_iterations=self.max_iterations,
                entry_point=task.entry_point,
                **self.options,
                task_id=task.id,
                name=self.name,
            ),
        )
