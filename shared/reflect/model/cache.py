"""`CachedChat`: the same deterministic request asked once, in memory, and the request key it and a
lesson's recorded calls share. (The local model's disk cache is the runtime's:
`course_runtime.response_cache`; `deterministic` and `CACHED_HEADER` are what the transport reads of it.)
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

CACHED_HEADER = "x-course-cached"


def deterministic(body: object) -> bool:
    """True when the request's reply does not depend on chance: temperature 0, or a seed."""
    if not isinstance(body, dict):
        return False
    temperature = body.get("temperature")
    return temperature == 0 or body.get("seed") is not None


def request_key(messages: list[dict], role: str, params: Mapping[str, Any]) -> str:
    """The identity of a chat request: its messages, role and every parameter, as canonical JSON
    (the key of `CachedChat` and of a lesson's recorded calls)."""
    return json.dumps(
        [messages, role, dict(params)], sort_keys=True, ensure_ascii=False, default=str
    )


@dataclass
class CachedChat:
    """Wraps a chat function; identical temperature-0 requests (with `seeded=True`, also sampled ones that carry a
    `seed`) are answered once and reused, with the original call's tokens; `hits` counts the reused answers. Safe
    from several threads: a request already in flight is waited for, not sent twice."""

    chat: Callable
    seeded: bool = False
    hits: int = 0
    _memo: dict = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, messages: list[dict], role: str = "critic", **params):
        deterministic = params.get("temperature", 1) == 0 or (
            self.seeded and params.get("seed") is not None
        )
        if not deterministic:
            return self.chat(messages, role=role, **params)
        key = request_key(messages, role, params)
        with self._lock:
            entry = self._memo.get(key)
            if entry is None:
                entry = self._memo[key] = [threading.Lock(), None]
                entry[0].acquire()  # this thread asks the model; others wait for its reply
                owner = True
            else:
                owner = False
                self.hits += 1
        if owner:
            try:
                entry[1] = self.chat(messages, role=role, **params)
            except BaseException:
                with self._lock:
                    del self._memo[key]  # a failed call is not cached: the next caller tries again
                raise
            finally:
                entry[0].release()
            return entry[1]
        with entry[0]:
            pass
        if entry[1] is None:  # the owner's call failed
            with self._lock:
                self.hits -= 1
            return self(messages, role=role, **params)
        return entry[1]
