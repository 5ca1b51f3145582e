"""The notebook layer: widgets with plain-text twins, and plots."""

from .plots import context_growth, feedback_curves, graph_picture
from .widgets import threshold_explorer

__all__ = ["context_growth", "feedback_curves", "graph_picture", "threshold_explorer"]
