"""The lessons' display, beside the package (it is not what the learner builds): widgets with plain-text twins,
and plots."""

from .drafts import DraftLog, Sweep, sweep
from .plots import (
    calibration_bars,
    context_growth,
    draft_scores,
    feedback_curves,
    graph_picture,
    pass_by_attempt,
)
from .tables import format_agreement, format_calibration, format_loops, format_sweep, score_grid
from .widgets import draft_stepper, threshold_explorer

__all__ = [
    "DraftLog",
    "Sweep",
    "sweep",
    "calibration_bars",
    "context_growth",
    "draft_scores",
    "draft_stepper",
    "feedback_curves",
    "graph_picture",
    "pass_by_attempt",
    "threshold_explorer",
    "format_agreement",
    "format_calibration",
    "format_loops",
    "format_sweep",
    "score_grid",
]
