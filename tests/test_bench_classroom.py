"""The classroom benchmark's bookkeeping (no model, no server): it sorts the client's own errors by
kind, and it counts a learner whose outputs differ from the lone learner's."""

import importlib.util
import sys
from pathlib import Path

from reflect.model.llm import Connection
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


def test_the_instructors_page_shows_the_committed_measurement():
    table = bc.markdown(bc.load(ROOT / "benchmarks" / "results" / "classroom.jsonl"))
    page = (ROOT / "docs" / "instructor.md").read_text()
    assert table.count("\n") >= 6 and table in page
