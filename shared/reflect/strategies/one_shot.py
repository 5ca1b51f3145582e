"""Lesson 01's baseline: one generator call, no review, judged by the hidden tests."""

from __future__ import annotations

from ..judging.hidden import Attempt, judge
from ..records import ChatFn, ReplyLike
from ..tasks.extract import extract_code
from ..tasks.prompts import GENERATOR_PROMPT, generator_messages
from ..tasks.task import Task


def one_shot(chat: ChatFn, task: Task, system_prompt: str = GENERATOR_PROMPT) -> Attempt:
    """One call, no review: the baseline every later lesson compares against."""
    _, reply, code = one_shot_call(chat, task, system_prompt)
    return judge(task, code, reply.prompt_tokens, reply.completion_tokens)


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
