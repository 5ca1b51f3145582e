"""The notebook layer: widgets with plain-text twins, and plots."""

from .drafts import DraftLog
from .plots import context_growth, feedback_curves, graph_picture
from .widgets import threshold_explorer

__all__ = ["DraftLog", "context_growth", "feedback_curves", "graph_picture", "threshold_explorer"]
