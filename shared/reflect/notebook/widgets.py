"""Notebook widgets. Each has a plain-text twin, so nbval-compared output never depends on a widget.

A saved widget is only a reference to state that lives in a kernel: opened without one (a web
viewer, JupyterLab before "Run", a printed copy) it shows as `VBox(children=(IntSlider(...`.
So each widget here prints a static view of what it explores first, and its own text form says
what it is.
"""

from __future__ import annotations

import difflib
import html

from ..records import Run


def _draft_diff(before: str, after: str) -> str:
    """Unified diff between two drafts ('' when identical)."""
    lines = difflib.unified_diff(
        before.splitlines(), after.splitlines(), "previous draft", "this draft", lineterm=""
    )
    return "\n".join(lines)


def iterations(run: Run) -> list[int]:
    """The iteration of each step: a draft starts one, and the steps after it (its review) share it."""
    out, n = [], 0
    for step in run.steps:
        n += step.is_draft
        out.append(n)
    return out


def render_turn(result: Run, i: int) -> str:
    """Turn i of a loop as text: who spoke, tokens, the message, and for drafts the diff to the previous one."""
    turn = result.steps[i]
    head = (
        f"turn {i + 1}/{len(result.steps)} · iteration {iterations(result)[i]} · {turn.role} · "
        f"{turn.prompt_tokens} prompt + {turn.completion_tokens} completion tokens"
    )
    if turn.role == "reviewer":
        head += f" · verdict: {'APPROVED' if turn.verdict.accepted else 'not approved'}"
    parts = [head, "", turn.reply.strip() or "(empty)"]
    if turn.role == "generator":
        earlier = [t.code or "" for t in result.steps[:i] if t.role == "generator"]
        if earlier:
            diff = _draft_diff(earlier[-1], turn.code or "")
            parts += ["", "diff to the previous draft:", diff or "(no change)"]
    return "\n".join(parts)


def _interactive(children: list, what: str):
    """A VBox whose text form, shown wherever the widget cannot be, names it instead of listing its children.

    ipywidgets cuts a text form at 110 characters, so `what` is kept short enough to be read whole.
    """
    import ipywidgets as widgets

    class Interactive(widgets.VBox):
        def __repr__(self) -> str:
            return f"[interactive: {what}; run the cell to use it]"

    return Interactive(children)


def _thread_overview(result: Run) -> str:
    """Every turn of a loop on one line: the static view printed above the stepper."""
    lines, its = [], iterations(result)
    for i, t in enumerate(result.steps):
        verdict = (
            f" · {'APPROVED' if t.verdict.accepted else 'not approved'}"
            if t.role == "reviewer"
            else ""
        )
        first = (t.reply.strip().splitlines() or ["(empty)"])[0]
        lines.append(
            f"turn {i + 1} · iteration {its[i]} · {t.role:<9} · {t.prompt_tokens:>5} prompt tokens"
            f"{verdict} · {first[:60]}"
        )
    return "\n".join(lines)


def thread_stepper(result: Run):
    """A slider that steps through the shared thread turn by turn, with draft diffs.

    Prints `thread_overview(result)` first: what a reader without a kernel sees."""
    import ipywidgets as widgets

    print(_thread_overview(result))

    slider = widgets.IntSlider(
        value=0, min=0, max=max(len(result.steps) - 1, 0), description="turn"
    )
    view = widgets.HTML()

    def show(change=None) -> None:
        view.value = f"<pre style='white-space: pre-wrap'>{html.escape(render_turn(result, slider.value))}</pre>"

    slider.observe(show, names="value")
    show()
    return _interactive(
        [slider, view], "a slider over the turns above, each turn's full text and draft diff"
    )


def threshold_summary(histories, threshold: float, max_iterations: int) -> str:
    """One line: what the recorded loops would have done under this threshold and budget."""
    from ..judging.calibration import sweep

    row = sweep(histories, [threshold], max_iterations)[0]
    return (
        f"threshold {threshold:g}, max {max_iterations} iterations: {row['avg_iterations']:.2f} iterations on average, "
        f"final pass rate {row['pass_rate']:.0%}, {row['avg_tokens']:.0f} tokens per task"
    )


def threshold_explorer(histories):
    """Sliders for threshold and max iterations that replay recorded histories instantly (no model calls).

    Prints the summary at threshold 8 and 1 to 3 iterations first: what a reader without a kernel sees."""
    import ipywidgets as widgets

    for n in range(1, 4):
        print(threshold_summary(histories, 8, n))

    thr = widgets.FloatSlider(value=8, min=1, max=10, step=0.5, description="threshold")
    its = widgets.IntSlider(
        value=3, min=1, max=max((len(h) for h in histories), default=1), description="max iter."
    )
    out = widgets.HTML()

    def show(change=None) -> None:
        out.value = f"<pre>{html.escape(threshold_summary(histories, thr.value, its.value))}</pre>"

    thr.observe(show, names="value")
    its.observe(show, names="value")
    show()
    return _interactive([thr, its, out], "sliders for the threshold and the iteration budget")
