"""What the package knows of a model: the settings (`config`), what a call returns and how it fails (`llm`),
accounting, `CachedChat` and each role's sampling. The client that makes the calls is `course_runtime.client`:
this layer never imports it, and a loop is given a `chat`. Names are imported on first use."""

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
