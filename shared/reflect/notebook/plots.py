"""Plots with a fixed size and style, so committed notebook outputs stay stable."""

from __future__ import annotations

import matplotlib.pyplot as plt

from ..strategies.maker_checker import LoopResult


def context_growth(results: dict[str, LoopResult], title: str = "The shared thread grows every turn"):
    """Prompt tokens per call over the turns of one or more loops."""
    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=80)
    for label, res in results.items():
        xs = list(range(1, len(res.steps) + 1))
        ax.plot(xs, [t.prompt_tokens for t in res.steps], marker="o", label=label)
    ax.set_xlabel("call (generator and reviewer alternate)")
    ax.set_ylabel("prompt tokens sent")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    return fig
