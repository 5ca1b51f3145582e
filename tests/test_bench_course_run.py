"""The course-run benchmark checks the model it is told to run on before it clones anything: an unknown
`COURSE_LOCAL_MODEL` is a clear error (exit 2), a known one goes on to the clone. No clone is made here.
Its closing line names the results file however `--out` gave it."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location(
    "bench_course_run", ROOT / "benchmarks" / "bench_course_run.py"
)
bcr = sys.modules.setdefault("bench_course_run", importlib.util.module_from_spec(spec))
spec.loader.exec_module(bcr)


class Cloned(Exception):
    pass


@pytest.fixture
def no_clone(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["bench_course_run.py"])

    def run(cmd, *args, **kwargs):
        if cmd[:2] == ["git", "clone"]:
            raise Cloned(cmd)
        return bcr.subprocess.CompletedProcess(cmd, 0, stdout="abc1234\n", stderr="")

    monkeypatch.setattr(bcr.subprocess, "run", run)


def test_an_unknown_model_is_refused_before_the_clone(no_clone, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LOCAL_MODEL", "qwen-bogus")
    assert bcr.main() == 2
    err = capsys.readouterr().err
    assert "Unknown local model 'qwen-bogus'" in err and "qwen2.5-coder-0.5b" in err


@pytest.mark.parametrize("name", [None, "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"])
def test_a_known_model_goes_on_to_the_clone(no_clone, monkeypatch, name):
    if name is None:
        monkeypatch.delenv("COURSE_LOCAL_MODEL", raising=False)
    else:
        monkeypatch.setenv("COURSE_LOCAL_MODEL", name)
    with pytest.raises(Cloned):
        bcr.main()


def test_the_results_file_is_named_however_out_gave_it(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    assert bcr.shown(Path("benchmarks/results/course_run_0.5b.json")) == str(
        Path("benchmarks/results/course_run_0.5b.json")
    )
    assert bcr.shown(ROOT / "course_run.json") == "course_run.json"
    assert bcr.shown(tmp_path / "elsewhere.json") == str(tmp_path / "elsewhere.json")


def test_the_cell_log_has_a_line_per_cell_with_its_model_calls(tmp_path):
    """course_runtime.client.log_cells, what bench_course_run's per-cell table reads: each executed cell's calls,
    cached calls, tokens and model seconds, from the connection's ledger."""
    import json
    from types import SimpleNamespace

    from IPython.core.interactiveshell import InteractiveShell

    from course_runtime.client import log_cells
    from reflect.model.accounting import Ledger

    shell = InteractiveShell.instance()
    conn = SimpleNamespace(ledger=Ledger())
    shell.user_ns["conn"] = conn
    path = tmp_path / "cells.jsonl"
    try:
        assert log_cells(conn, path, "99_test")
        shell.run_cell("x = 1  # no call")
        shell.run_cell(
            "from reflect.model.accounting import CallRecord\n"
            "conn.ledger.add(CallRecord('generator', 100, 20, 3.5, 'local', 'm'))\n"
            "conn.ledger.add(CallRecord('critic', 50, 5, 9.0, 'local', 'm', cached=True))"
        )
    finally:
        shell.events.callbacks["pre_run_cell"].clear()
        shell.events.callbacks["post_run_cell"].clear()
        InteractiveShell.clear_instance()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(c["cell"], c["calls"]) for c in lines] == [
        ("x = 1  # no call", 0),
        ("from reflect.model.accounting import CallRecord", 2),
    ]
    assert lines[1] | {"wall_s": 0} == {
        "lesson": "99_test",
        "cell": "from reflect.model.accounting import CallRecord",
        "wall_s": 0,
        "calls": 2,
        "cached": 1,
        "tokens": 175,
        "model_s": 3.5,
    }
