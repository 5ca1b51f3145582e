"""parallel_map: input order, workers actually overlap, errors and replay misses stop it."""

import ast
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from course_runtime.replay import ReplayMiss
from reflect import records
from reflect.model.parallel import parallel_map
from tests.in_flight import InFlight


def test_results_come_back_in_input_order_whatever_finishes_first():
    def slow_first(i):
        time.sleep(0.05 * (5 - i))
        return i * i

    assert parallel_map(slow_first, range(6), workers=3, progress=False) == [0, 1, 4, 9, 16, 25]


def test_calls_overlap_up_to_the_number_of_workers():
    many, one = InFlight(), InFlight()

    def work(counter):
        with counter.inside(0.1):
            pass

    parallel_map(work, [many] * 9, workers=3, progress=False)
    parallel_map(work, [one] * 4, workers=1, progress=False)
    assert (many.peak, one.peak) == (3, 1)


@pytest.mark.parametrize("error", [ValueError("bad item"), ReplayMiss("not recorded")])
def test_an_error_in_one_call_is_raised_and_unstarted_calls_are_cancelled(error):
    started = []

    def work(i):
        started.append(i)
        time.sleep(0.02)
        if i == 1:
            raise error
        return i

    with pytest.raises(type(error), match=str(error)):
        parallel_map(work, range(50), workers=2, progress=False)
    assert len(started) < 50


def test_parse_python_converts_under_the_lock_and_tries_a_tripped_conversion_once_more(monkeypatch):
    """On CPython 3.11/3.12 two threads in `ast.parse` at once can raise "AST constructor recursion
    depth mismatch" (python/cpython#106905); it broke lesson 01's replay under conn.map. Every parse
    of the package holds one lock, and a parse that code outside the package overlapped is tried again."""
    calls = []

    def parse(source):
        calls.append(records._AST_LOCK.locked())
        if len(calls) == 1:
            raise SystemError("AST constructor recursion depth mismatch (before=1, after=2)")
        return real(source)

    real = ast.parse
    monkeypatch.setattr(records, "ast", SimpleNamespace(parse=parse))
    assert isinstance(records.parse_python("x = 1"), ast.Module)
    assert calls == [True, True]
    errors = iter([SystemError("another error")])

    def parse_once_wrong(source):
        for err in errors:
            raise err
        return real(source)

    monkeypatch.setattr(records, "ast", SimpleNamespace(parse=parse_once_wrong))
    with pytest.raises(SystemError, match="another error"):  # not tried again
        records.parse_python("x = 1")


def test_no_module_of_ours_parses_python_without_the_lock():
    """Lesson 03b's loops crashed now and then with that SystemError: `critic_view` called `ast.parse`
    itself on the loops' threads. Only `parse_python` may."""
    shared = Path(__file__).resolve().parents[1] / "shared"
    unlocked = [
        f"{path.relative_to(shared)}:{node.lineno}"
        for package in ("reflect", "course_sandbox", "course_runtime")
        for path in sorted((shared / package).rglob("*.py"))
        if path.name != "records.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "parse"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "ast"
    ]
    assert unlocked == []
