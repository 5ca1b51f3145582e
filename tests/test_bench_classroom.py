"""The classroom benchmark's bookkeeping (no model, no server): it sorts the client's own errors by
kind, and it counts a learner whose outputs differ from the lone learner's."""

import importlib.util
import sys
from pathlib import Path

from course_runtime.client import Connection
from tests.conftest import settings_for

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "bench_classroom", ROOT / "benchmarks" / "bench_classroom.py"
)
bc = sys.modules.setdefault("bench_classroom", importlib.util.module_from_spec(spec))
spec.loader.exec_module(bc)


def test_the_clients_own_messages_are_sorted_by_kind():
    conn = Connection(
        client=None,
        model="m",
        backend="openai",
        live_backend="openai",
        base_url="http://class:8080/v1",
        settings=settings_for("openai", OPENAI_API_KEY="k"),
    )
    assert bc.error_kind(conn._busy(503, 7, 290)) == "busy"
    assert bc.error_kind(conn._slow(300)) == "timeout"
    assert bc.error_kind(conn._explain("could not connect")) == "connect"
    assert bc.error_kind(conn._explain("Error code: 401")) == "other"


def test_a_learner_with_any_output_unlike_the_lone_learners_is_counted_once():
    alone = {"01/a": "x1", "01/b": "y1", "02/c": "z1"}
    row = {
        "outputs": [
            dict(alone),
            {**alone, "01/b": "y2"},
            {**alone, "01/b": "y3", "02/c": "z2"},
            {"01/a": "x1"},  # a learner who did not finish: what it lacks differs
        ]
    }
    count, keys = bc.differing(row, alone)
    assert count == 3 and keys == ["01/b", "02/c"]
    assert bc.differing(row, None) is None


def a_class(model, outputs):
    n = len(outputs)
    return {
        "learners": n, "hog": False, "slots": n, "finished": n, "learner_s": [10.0] * n,
        "lesson01_s": [8.0] * n, "latency_s": {"p50": 1, "p95": 2, "max": 3}, "tokens_per_s": 20.0,
        "errors": {}, "outputs": outputs, "meta": {"model": model},
    }  # fmt: skip


def test_each_model_is_compared_with_its_own_lone_learner_and_has_its_own_table():
    rows = [
        a_class("big", [{"01/a": "x"}]),
        a_class("small", [{"01/a": "y"}]),
        a_class("small", [{"01/a": "y"}, {"01/a": "z"}]),
    ]
    small = bc.markdown(rows, "small")
    assert "| 2 | " in small and small.rstrip().endswith("| 1 of 2 |")
    assert "| 2 | " not in bc.markdown(rows, "big")
    assert "small" in bc.report(rows).splitlines()[3] and "1/2" in bc.report(rows).splitlines()[3]


def test_the_instructors_page_shows_the_committed_measurement_of_each_model():
    rows = bc.load(ROOT / "benchmarks" / "results" / "classroom.jsonl")
    page = (ROOT / "docs" / "instructor.md").read_text()
    for model in {bc.model_of(r) for r in rows}:
        table = bc.markdown(rows, model)
        assert table.count("\n") >= 4 and table in page, model
