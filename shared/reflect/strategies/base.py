"""What every strategy shares: the run frame (`execute`), and `with_sampling` for a loop whose sampling is
a setting. A strategy's identity in a results file is the evaluation layer's (`reflect.evaluation.runner.config_of`):
a strategy names only the roles it calls (`ROLES`) and the prompts it sends (`prompts()`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from ..judging.hidden import judge
from ..records import ChatFn, Run, Stop
from ..tasks.task import Task


def execute(strategy: Any, task: Task, body: Callable[[], Run]) -> Run:
    """The frame every strategy shares: a blank task makes no call; the run is timed and, if the
    strategy says so, judged by the hidden tests."""
    if not task.prompt().strip():
        return Run(
            strategy=strategy.name,
            task_id=task.id,
            final_code="",
            stop=Stop.BLANK_INPUT,
            chosen="no draft: the task is blank",
            error="The task is blank: give the generator something to write.",
        )
    start = time.perf_counter()
    run = dataclasses.replace(body(), wall_s=time.perf_counter() - start)
    if strategy.judge_hidden:
        run = dataclasses.replace(
            run, passed=judge(task, run.final_code).passed if run.final_code.strip() else False
        )
    return run


def with_sampling(
    chat: ChatFn, temperature: float, seed: int | None, max_tokens: Callable[[str], int]
) -> ChatFn:
    """`chat` with a lesson's stated sampling added to every call (a call's own keywords win):
    without it a server applies its own defaults, and llama.cpp's samples (temperature 0.8, a
    random seed), so the same request gives another answer each time."""

    def sampled(messages: list[dict], role: str = "generator", **params):
        fixed = {
            "temperature": temperature,
            "max_tokens": max_tokens(role),
            **({} if seed is None else {"seed": seed}),
        }
        return chat(messages, role=role, **{**fixed, **params})

    return sampled
