"""The notebook layer: widgets with plain-text twins, and plots."""

from .drafts import DraftLog, Sweep, sweep
from .plots import context_growth, feedback_curves, graph_picture
from .widgets import threshold_explorer

__all__ = [
    "DraftLog",
    "Sweep",
    "sweep",
    "context_growth",
    "feedback_curves",
    "graph_picture",
    "threshold_explorer",
]
