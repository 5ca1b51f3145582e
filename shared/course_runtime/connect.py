"""`connect()`, the course's one way into a model: the client (`reflect.model.llm.connect`) with the
local runtime that starts, and restarts, the default model's server (`manager.ensure_server`), and its
disk cache of the model's replies (`response_cache`)."""

from __future__ import annotations

import httpx

from reflect.model import llm
from reflect.model.config import Settings

from . import response_cache
from .manager import ensure_server


def connect(
    notebook: str | None = None,
    *,
    settings: Settings | None = None,
    transport: httpx.BaseTransport | None = None,
    quiet: bool = False,
) -> llm.Connection:
    """A ready connection to the configured model, with one banner line (`reflect.model.llm.connect`,
    whose settings, backends and cassettes it takes); the local backend's server comes from here."""
    return llm.connect(
        notebook,
        settings=settings,
        transport=transport,
        quiet=quiet,
        local=ensure_server,
        cache_for=response_cache.for_server,
    )
