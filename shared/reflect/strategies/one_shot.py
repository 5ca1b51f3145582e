"""Lesson 01's baseline: one generator call, no review, judged by the hidden tests; a `Run`, as every strategy returns."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from ..judging.hidden import judge
from ..model.roles import SAMPLING, SEED
from ..records import ChatFn, Run, Stop, model_step
from ..tasks.extract import extract_code
from ..tasks.prompts import GENERATOR_PROMPT, generator_messages
from ..tasks.task import Task
from .base import execute, with_sampling


def one_shot(chat: ChatFn, task: Task, system_prompt: str = GENERATOR_PROMPT) -> Run:
    """One call, no review: the baseline every later lesson compares against, as a `Run` of one step
    whose `passed` is the hidden tests' verdict (`judge(task, run.final_code)` gives the detail)."""
    start = time.perf_counter()
    run = _one_call(chat, task, system_prompt)
    return replace(
        run, wall_s=time.perf_counter() - start, passed=judge(task, run.final_code).passed
    )


def _one_call(chat: ChatFn, task: Task, system_prompt: str, name: str = "one-shot") -> Run:
    """The one generator call of one-shot, as a `Run` of one step."""
    prompt = task.prompt()
    if not prompt.strip():
        raise ValueError(f"Task {task.id!r} has a blank statement.")
    messages = generator_messages(prompt, system_prompt)
    reply = chat(messages, role="generator")
    code = extract_code(reply.text, task.entry_point).code
    step = model_step(0, "generator", messages, reply, code)
    return Run(
        strategy=name,
        task_id=task.id,
        final_code=code,
        stop=Stop.SINGLE_DRAFT,
        steps=(step,),
        chosen="the only draft",
    )


@dataclass
class OneShot:
    """Lesson 01: one generator call, no critic, sampled as every first draft is (temperature 0,
    seed 42, 512 tokens: `reflect.model.roles`)."""

    system_prompt: str = GENERATOR_PROMPT
    temperature: float = SAMPLING["generator"]["temperature"]
    seed: int | None = SEED
    max_tokens: int = SAMPLING["generator"]["max_tokens"]
    judge_hidden: bool = True  # fill Run.passed from the hidden tests
    name: str = "one-shot"
    ROLES = ("generator",)  # its prompt is a field

    def run(self, task: Task, chat: ChatFn) -> Run:
        """One call; the draft is final."""
        sampled = with_sampling(chat, self.temperature, self.seed, lambda role: self.max_tokens)

        return execute(self, task, lambda: _one_call(sampled, task, self.system_prompt, self.name))
