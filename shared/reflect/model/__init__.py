"""The client: settings (`config`), the connection (`connect`, `chat`), accounting, replay cassettes,
`CachedChat` (in memory) and the sampling of each role. The local server it talks to by default, and
that server's disk cache, come from `course_runtime`, which passes them in (`course_runtime.client`): this
layer never imports it.

Its names are imported on first use: the client brings openai, and the sandbox and the runtime read
`config` (the platform check first) without it."""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "PRICES_PER_MTOK": "accounting",
    "estimate_cost": "accounting",
    "repo_root": "config",
    "Reply": "llm",
    "SAMPLING": "roles",
    "sampling": "roles",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is used."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
