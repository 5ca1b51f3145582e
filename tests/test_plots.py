"""The offline drawing of a graph (lesson 04's picture): rows, loops, and edges that clear the nodes."""

import matplotlib

matplotlib.use("Agg")

from matplotlib.text import Annotation  # noqa: E402

from reflect.notebook.plots import _bend, graph_layers, graph_picture  # noqa: E402
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
