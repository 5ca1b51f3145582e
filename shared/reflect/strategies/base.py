"""What every strategy shares: the run frame (`execute`) and its identity (`Configured.config()`).

What a configuration holds, and why not a repr: docs/package.md, "The modules in detail".
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, ClassVar

from ..judging.hidden import judge
from ..model.roles import SAMPLING
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


def plain(value: Any) -> Any:
    """A setting as plain JSON values (docs/package.md, 'The modules in detail'), equal after a JSON round trip."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"type": type(value).__name__, **settings(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{value.__module__}.{value.__qualname__}"
    return type(value).__name__


def settings(obj: Any) -> dict[str, Any]:
    """A dataclass's settings as plain values: every field but those marked `repr=False`, which hold
    a run's own bookkeeping (what it ran, where it stops), not its setup. A field added after runs were
    recorded (metadata `KEYED_WHEN_SET`) is keyed only when it differs from its default, so the runs made
    before it keep their key."""
    return {
        f.name: plain(getattr(obj, f.name))
        for f in dataclasses.fields(obj)
        if f.repr and not (f.metadata.get(KEYED_WHEN_SET) and getattr(obj, f.name) == f.default)
    }


KEYED_WHEN_SET = "keyed_when_set"


def fingerprint(texts: tuple[str, ...]) -> str:
    """Twelve hex digits of the SHA-256 of the texts, in order."""
    return hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:12]


class Configured:
    """A strategy's identity, for a dataclass strategy that names the roles it calls (`ROLES`) and
    the prompts it sends (`prompts()`)."""

    ROLES: ClassVar[tuple[str, ...]] = ()

    def prompts(self) -> tuple[str, ...]:
        """The module-level prompts this strategy sends (overridden by each strategy)."""
        return ()

    def config(self) -> dict[str, Any]:
        """Every setting that changes what the strategy sends or decides (docs/package.md, 'The modules in detail')."""
        return {
            "strategy": type(self).__name__,
            **settings(self),
            "role_sampling": {role: plain(SAMPLING[role]) for role in self.ROLES},
            "prompts": fingerprint(self.prompts()),
        }


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
