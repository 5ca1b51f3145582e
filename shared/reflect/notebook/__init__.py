"""The notebook layer: widgets with plain-text twins, and plots.
The names below are imported on first use (matplotlib and ipywidgets are heavy)."""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "context_growth": "plots",
    "feedback_curves": "plots",
    "graph_picture": "plots",
    "threshold_explorer": "widgets",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is used."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
