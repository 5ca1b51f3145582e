"""The evaluation layer: running strategies over tasks and storing what they did (results)."""

from .recorded import RecordedCalls, evaluate_each, loop_histories, verdicts_as_recorded
from .report import exact_sign_test, paired, provenance
from .results import (
    LIVE_SAMPLE,
    full_run,
    load_attempts,
    recorded_dir,
    recorded_experiment,
    recording_meta,
    results_dir,
    save_attempts,
)
from .runner import current_rows, live_sample, run_bench

__all__ = [
    "LIVE_SAMPLE",
    "RecordedCalls",
    "current_rows",
    "evaluate_each",
    "exact_sign_test",
    "full_run",
    "live_sample",
    "load_attempts",
    "loop_histories",
    "paired",
    "provenance",
    "recorded_dir",
    "recorded_experiment",
    "recording_meta",
    "results_dir",
    "run_bench",
    "save_attempts",
    "verdicts_as_recorded",
]
