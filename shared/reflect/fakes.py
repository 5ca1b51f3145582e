"""Scripted stand-ins for a model, to test loops without one (the course's own tests use them too)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FakeReply:
    text: str
    prompt_tokens: int = 10
    completion_tokens: int = 5
    role: str = ""


@dataclass
class ScriptedChat:
    """`chat(messages, role=...)` that answers each role from its own script, in order.

    Script items are strings, FakeReply objects, or exceptions to raise (to simulate a
    provider error). Prompt tokens default to the number of words sent, so a growing thread
    costs more, as it does with a real model.
    """

    scripts: dict[str, list]
    calls: list[tuple[str, list[dict]]] = field(default_factory=list)

    def __call__(self, messages: list[dict], role: str = "generator", **params) -> FakeReply:
        self.calls.append((role, [dict(m) for m in messages]))
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
