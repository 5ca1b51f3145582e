"""The evaluation layer: running strategies over tasks and storing what they did (results).
The names below are imported on first use; `feedback` and `report` are its analysis modules."""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "RecordedCalls": "recorded",
    "verdicts_as_recorded": "recorded",
    "exact_sign_test": "report",
    "paired": "report",
    "provenance": "report",
    "LIVE_SAMPLE": "results",
    "full_run": "results",
    "load_attempts": "results",
    "recorded_dir": "results",
    "recorded_experiment": "results",
    "recording_meta": "results",
    "results_dir": "results",
    "save_attempts": "results",
    "current_rows": "runner",
    "live_sample": "runner",
    "run_bench": "runner",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import a public name from its module the first time it is used."""
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
