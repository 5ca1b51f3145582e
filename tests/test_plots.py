"""The offline drawing of a graph (lesson 04's picture): rows, loops, and edges that clear the nodes."""

import matplotlib

matplotlib.use("Agg")

from matplotlib.text import Annotation  # noqa: E402

from course_notebook.plots import _bend, graph_layers, graph_picture  # noqa: E402
from reflect.strategies import graph as rg  # noqa: E402


def test_a_loop_back_is_found_and_every_node_sits_just_above_what_it_leads_to():
    nodes = ["start", "draft", "critique", "refine", "done", "end"]
    edges = [
        ("start", "draft"),
        ("draft", "critique"),
        ("critique", "refine"),
        ("refine", "critique"),
        ("critique", "done"),
        ("refine", "end"),
        ("done", "end"),
    ]
    rows, back = graph_layers(nodes, edges)
    assert back == {("refine", "critique")}
    assert rows == {"start": 0, "draft": 1, "critique": 2, "refine": 3, "done": 3, "end": 4}


def test_a_node_reached_twice_is_not_a_loop():
    rows, back = graph_layers(
        ["a", "b", "c", "d"], [("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")]
    )
    assert back == set() and rows == {"a": 0, "b": 1, "c": 2, "d": 3}


def test_the_lessons_graph_has_one_loop_and_its_three_ways_out_on_one_row():
    drawable = rg.build_graph(rg.GraphParts(lambda *a, **k: None, None)).get_graph()
    rows, back = graph_layers(list(drawable.nodes), [(e.source, e.target) for e in drawable.edges])
    assert back == {("refine_draft", "critique_draft")}
    assert (
        rows["finalize"]
        == rows["mark_needs_review"]
        == rows["handle_failure"]
        == rows["__end__"] - 1
    )


def test_an_edge_bends_only_as_far_as_it_must_to_clear_a_node():
    rads = [0, 0.2, -0.2, 0.5, -0.5]
    assert _bend((0, 0), (0, -2), [(2, 3, -1.2, -0.8)], rads) == 0  # nothing in the way: straight
    blocked = [(-0.3, 0.3, -1.2, -0.8)]  # a node on the straight line
    rad = _bend((0, 0), (0, -2), blocked, rads)
    assert rad not in (None, 0)
    assert _bend((0, 0), (0, -2), [(-5, 5, -1.2, -0.8)], rads) is None  # no curve clears a wall


def test_the_picture_draws_every_node_and_every_edge_of_the_graph():
    drawable = rg.build_graph(rg.GraphParts(lambda *a, **k: None, None)).get_graph()
    fig = graph_picture(drawable)
    ax = fig.axes[0]
    arrows = [c for c in ax.get_children() if isinstance(c, Annotation)]
    labels = {t.get_text() for t in ax.texts if not isinstance(t, Annotation)}
    assert len(arrows) == len(drawable.edges)
    assert {"start", "end", "critique_draft", "handle_failure"} <= labels
    dashed = sum(a.arrow_patch.get_linestyle() != "-" for a in arrows)
    assert dashed == sum(e.conditional for e in drawable.edges)


def _log(task_id, codes):
    from course_notebook import DraftLog
    from reflect.tasks.task import get_task
    from reflect.testing import ScriptedChat

    log = DraftLog(
        ScriptedChat({"generator": [f"```python\n{c}```" for c in codes]}), get_task(task_id)
    )
    for _ in codes:
        log([{"role": "user", "content": "write it"}], role="generator")
    return log


FACT_WRONG = "def calculate_factorial(n):\n    return n\n"
FACT_RIGHT = (
    'def calculate_factorial(n):\n    """n!"""\n    if n < 0:\n        raise ValueError(n)\n'
    "    out = 1\n    for k in range(2, n + 1):\n        out *= k\n    return out\n"
)


def test_draft_scores_draws_the_critics_score_of_each_revised_draft_filled_where_it_passes():
    from course_notebook import draft_scores
    from reflect.judging import TestGroundedCritic

    logs = {
        "factorial": _log("factorial", [FACT_WRONG, FACT_RIGHT]),
        "fibonacci": _log("fibonacci", ["x = 1\n"]),
    }
    fig = draft_scores({"one": logs, "two": {}}, TestGroundedCritic())
    ax = fig.axes[0]
    line = [ln for ln in ax.lines if ln.get_label() == "factorial"][
        0
    ]  # fibonacci has one draft: not drawn
    assert (
        list(line.get_ydata()) == [round(1 + 9 * 1 / 4, 1), 10.0]
        and len(ax.get_legend().get_texts()) == 1
    )
    markers = [ln for ln in ax.lines if ln.get_marker() == "o"]
    assert [m.get_markerfacecolor() == "none" for m in markers] == [True, False]
    assert len(fig.axes) == 2


def test_calibration_bars_are_the_share_passing_per_score_beside_the_base_rate():
    from course_notebook import calibration_bars

    fig = calibration_bars([(10, True), (10, True), (10, False), (5.5, False), (None, True)])
    ax = fig.axes[0]
    assert [round(p.get_height(), 3) for p in ax.patches] == [0.0, 0.667]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["5.5", "10"]
    assert ax.lines[0].get_ydata()[0] == 0.5  # two of the four scored drafts pass


def test_pass_by_attempt_counts_a_right_draft_written_by_each_attempt_and_the_returned_one():
    from course_notebook import pass_by_attempt

    hidden = lambda task_id, code: code == "good"  # noqa: E731

    def mk(tid, drafts, final):  # the fields of a Run the figure reads
        return type("R", (), {"task_id": tid, "drafts": drafts, "final_code": final})()

    fig = pass_by_attempt(
        {"m": [mk("a", ["bad", "good"], "bad"), mk("b", ["good"], "good")]}, hidden
    )
    ax = fig.axes[0]
    assert list(ax.lines[0].get_ydata()) == [
        0.5,
        1.0,
    ]  # by attempt 1 one task has it, by attempt 2 both
    assert list(ax.lines[1].get_ydata()) == [0.5]  # the returned drafts: b's only


def test_the_draft_stepper_prints_every_draft_and_shows_the_one_the_slider_picks(capsys):
    from course_notebook import draft_stepper

    log = _log("factorial", [FACT_WRONG, FACT_RIGHT])
    widget = draft_stepper(log)
    assert "--- draft 2 (generator), hidden tests: pass" in capsys.readouterr().out
    slider, view = widget.children
    assert "draft 1" in view.value and "draft 2" not in view.value
    slider.value = 2
    assert "draft 2 (generator), hidden tests: pass" in view.value
    assert repr(widget).startswith("[interactive: a slider over the 2 drafts of factorial")
