"""reflect: the helper package of the reflection-pattern course, the answer key of what the lessons build.

Its folders are layers, a lower one never importing a higher one (tests/test_layers.py): records, testing,
model/, tasks/, judging/, memory/, strategies/, evaluation/. The map, and what sits beside the package and is
never imported by it (course_runtime, course_sandbox, course_checks, course_notebook, course_bench):
docs/package.md. The names below are imported on first use, so `import reflect` stays fast.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "CachedChat": "model.cache",
    "ConfigError": "model.config",
    "Settings": "model.config",
    "ModelError": "model.llm",
    "Reply": "model.llm",
    "response_format_for": "model.llm",
    "Ledger": "model.accounting",
    "Run": "records",
    "Step": "records",
    "Stop": "records",
    "Verdict": "records",
}
__all__ = [
    "CachedChat",
    "ConfigError",
    "Ledger",
    "ModelError",
    "Reply",
    "Run",
    "Settings",
    "Step",
    "Stop",
    "Verdict",
    "response_format_for",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its layer the first time it is used."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'reflect' has no attribute {name!r}")
    where = _EXPORTS[name]
    value = getattr(import_module(f".{where}", __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # for editors and type checkers; never run
    from .model.accounting import Ledger
    from .model.cache import CachedChat
    from .model.config import ConfigError, Settings
    from .model.llm import ModelError, Reply, response_format_for
    from .records import Run, Step, Stop, Verdict
