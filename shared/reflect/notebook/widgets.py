"""Notebook widgets. Each has a plain-text twin, so nbval-compared output never depends on a widget."""

from __future__ import annotations

import difflib
import html

from ..strategies.maker_checker import LoopResult


def draft_diff(before: str, after: str) -> str:
    """Unified diff between two drafts ('' when identical)."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), "previous draft", "this draft", lineterm="")
    return "\n".join(lines)


def render_turn(result: LoopResult, i: int) -> str:
    """Turn i of a loop as text: who spoke, tokens, the message, and for drafts the diff to the previous one."""
    turn = result.turns[i]
    head = f"turn {i + 1}/{len(result.turns)} · iteration {turn.iteration} · {turn.role} · " \
           f"{turn.prompt_tokens} prompt + {turn.completion_tokens} completion tokens"
    if turn.role == "reviewer":
        head += f" · verdict: {'APPROVED' if turn.approved else 'not approved'}"
    parts = [head, "", turn.text.strip() or "(empty)"]
    if turn.role == "generator":
        earlier = [t.code or "" for t in result.turns[:i] if t.role == "generator"]
        if earlier:
            diff = draft_diff(earlier[-1], turn.code or "")
            parts += ["", "diff to the previous draft:", diff or "(no change)"]
    return "\n".join(parts)


def thread_stepper(result: LoopResult):
    """A slider that steps through the shared thread turn by turn, with draft diffs."""
    import ipywidgets as widgets

    slider = widgets.IntSlider(value=0, min=0, max=max(len(result.turns) - 1, 0), description="turn")
    view = widgets.HTML()

    def show(change=None) -> None:
        view.value = f"<pre style='white-space: pre-wrap'>{html.escape(render_turn(result, slider.value))}</pre>"

    slider.observe(show, names="value")
    show()
    return widgets.VBox([slider, view])


def threshold_summary(histories, threshold: float, max_iterations: int) -> str:
    """One line: what the recorded loops would have done under this threshold and budget."""
    from ..judging.calibration import sweep

    row = sweep(histories, [threshold], max_iterations)[0]
    return (f"threshold {threshold:g}, max {max_iterations} iterations: {row['avg_iterations']:.2f} iterations on average, "
            f"final pass rate {row['pass_rate']:.0%}, {row['avg_tokens']:.0f} tokens per task")


def threshold_explorer(histories):
    """Sliders for threshold and max iterations that replay recorded histories instantly (no model calls)."""
    import ipywidgets as widgets

    thr = widgets.FloatSlider(value=8, min=1, max=10, step=0.5, description="threshold")
    its = widgets.IntSlider(value=3, min=1, max=max((len(h) for h in histories), default=1), description="max iter.")
    out = widgets.HTML()

    def show(change=None) -> None:
        out.value = f"<pre>{html.escape(threshold_summary(histories, thr.value, its.value))}</pre>"

    thr.observe(show, names="value")
    its.observe(show, names="value")
    show()
    return widgets.VBox([thr, its, out])
