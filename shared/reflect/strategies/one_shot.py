"""Lesson 01's baseline: one generator call, no review, judged by the hidden tests; a `Run`, as every strategy returns."""

from __future__ import annotations

import time

from ..judging.hidden import judge
from ..records import ChatFn, ReplyLike, Run, Stop, model_step
from ..tasks.extract import extract_code
from ..tasks.prompts import GENERATOR_PROMPT, generator_messages
from ..tasks.task import Task


def one_shot(chat: ChatFn, task: Task, system_prompt: str = GENERATOR_PROMPT) -> Run:
    """One call, no review: the baseline every later lesson compares against, as a `Run` of one step
    whose `passed` is the hidden tests' verdict (`judge(task, run.final_code)` gives the detail)."""
    start = time.perf_counter()
    messages, reply, code = one_shot_call(chat, task, system_prompt)
    step = model_step(0, "generator", messages, reply, code)
    return Run(
        "one-shot",
        task.id,
        code,
        Stop.SINGLE_DRAFT,
        (step,),
        "the only draft",
        time.perf_counter() - start,
        passed=judge(task, code).passed,
    )


def one_shot_call(
    chat: ChatFn, task: Task, system_prompt: str = GENERATOR_PROMPT
) -> tuple[list[dict], ReplyLike, str]:
    """The one generator call of one-shot: (messages sent, reply, extracted code)."""
    prompt = task.prompt()
    if not prompt.strip():
        raise ValueError(f"Task {task.id!r} has a blank statement.")
    messages = generator_messages(prompt, system_prompt)
    reply = chat(messages, role="generator")
    return messages, reply, extract_code(reply.text, task.entry_point).code
