"""Notebook widgets. Each has a plain-text twin, so nbval-compared output never depends on a widget.

A saved widget is only a reference to state that lives in a kernel: opened without one (a web
viewer, JupyterLab before "Run", a printed copy) it shows as `VBox(children=(IntSlider(...`.
So each widget here prints a static view of what it explores first, and its own text form says
what it is.
"""

from __future__ import annotations

import html


def _interactive(children: list, what: str):
    """A VBox whose text form, shown wherever the widget cannot be, names it instead of listing its children.

    ipywidgets cuts a text form at 110 characters, so `what` is kept short enough to be read whole.
    """
    import ipywidgets as widgets

    class Interactive(widgets.VBox):
        def __repr__(self) -> str:
            return f"[interactive: {what}; run the cell to use it]"

    return Interactive(children)


def threshold_summary(histories, threshold: float, max_iterations: int) -> str:
    """One line: what the recorded loops would have done under this threshold and budget."""
    from reflect.judging.calibration import sweep

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


def draft_stepper(log, width: int = 240):
    """A slider over the drafts of one run (a `DraftLog`): what each request said, the hidden verdict, the diff to
    the draft before. Prints every draft first: what a reader without a kernel sees."""
    import ipywidgets as widgets

    print(log.show(width))
    step = widgets.IntSlider(value=1, min=1, max=max(len(log.drafts), 1), description="draft")
    out = widgets.HTML()

    def show(change=None) -> None:
        out.value = (
            f"<pre>{html.escape(log.section(step.value, width)) if log.drafts else ''}</pre>"
        )

    step.observe(show, names="value")
    show()
    return _interactive([step, out], f"a slider over the {len(log.drafts)} drafts of {log.task.id}")
