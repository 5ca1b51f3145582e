"""The two revise steps of lesson 03, `revise(chat, task, code, feedback, n)` -> the code of draft n: the
answer keys of the learner's `refine` (Build 4) and `fresh` (Build 5), and what lesson 04's graph revises with.

`refine` is the textbook revision, the request of `scored_reflection`'s refiner: the previous draft and
the critic's feedback, at the refiner's sampling. `fresh` is a new sample shown the feedback and not the
old code, with a seed per draft: the revision lesson 06 measured to repair failed drafts at this size.
"""

from __future__ import annotations

from collections.abc import Callable

from ..model.roles import SAMPLING, SEED, sampling
from ..tasks.extract import extract_code
from ..tasks.prompts import fresh_request, generator_messages, refine_messages
from ..tasks.task import Task


def refine(chat: Callable, task: Task, code: str, feedback: str, n: int) -> str:
    """Draft n from the refiner, shown the task, the previous draft and the feedback (`n` unused)."""
    reply = chat(refine_messages(task, code, feedback), role="refiner", **sampling("refiner"))
    return extract_code(reply.text, task.entry_point).code


def fresh(chat: Callable, task: Task, code: str, feedback: str, n: int) -> str:
    """Draft n as a new sample (the sampler's temperature, seed 41 + n) shown the task and the feedback,
    never `code`."""
    reply = chat(
        generator_messages(fresh_request(task, feedback)),
        role="generator",
        temperature=SAMPLING["sampler"]["temperature"],
        max_tokens=SAMPLING["generator"]["max_tokens"],
        seed=SEED - 1 + n,
    )
    return extract_code(reply.text, task.entry_point).code
