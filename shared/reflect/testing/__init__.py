"""Scripted stand-ins for a model, to test loops without one (the course's own tests use them too)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

__all__ = ["Call", "FakeReply", "ScriptedChat"]


@dataclass
class FakeReply:
    """A scripted reply with the fields a real Reply has (text and token counts)."""

    text: str
    prompt_tokens: int = 10
    completion_tokens: int = 5
    role: str = ""


@dataclass(frozen=True)
class Call:
    """One request a ScriptedChat received: the role, a copy of the messages, and every other
    keyword argument (temperature, seed, max_tokens, response_format, ...), so a test can
    assert that a loop or a critic asked for what the lesson says it asks for."""

    role: str
    messages: list[dict]
    params: dict


@dataclass
class ScriptedChat:
    """`chat(messages, role=..., **params)` that answers each role from its own script, in order.

    Script items are strings, FakeReply objects, or exceptions to raise (to simulate a
    provider error). Prompt tokens default to the number of words sent, so a growing thread
    costs more, as it does with a real model. Every call is kept in `calls` with its full
    parameters.
    """

    scripts: dict[str, list]
    calls: list[Call] = field(default_factory=list)

    def __call__(self, messages: list[dict], role: str = "generator", **params) -> FakeReply:
        self.calls.append(Call(role, [dict(m) for m in messages], copy.deepcopy(params)))
        script = self.scripts.get(role)
        if not script:
            raise IndexError(f"ScriptedChat has no more replies for role {role!r}")
        item = script.pop(0)
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, FakeReply):
            return item
        words = sum(len(str(m.get("content", "")).split()) for m in messages)
        return FakeReply(item, prompt_tokens=words, completion_tokens=len(item.split()), role=role)
