"""parallel_map: input order, workers actually overlap, errors and replay misses stop it."""

import time

import pytest

from course_runtime.replay import ReplayMiss
from reflect.model.parallel import parallel_map
from reflect.records import parse_python
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


class _FreedByTheCollector:
    """A reference cycle whose finalizer gives up the GIL: the garbage collector, run in the
    middle of one thread's AST conversion, lets another thread convert at the same time."""

    def __init__(self):
        self.me = self

    def __del__(self):
        time.sleep(0.001)


def test_parsing_from_several_threads_never_trips_the_ast_converter():
    """On CPython 3.11/3.12 two threads in `ast.parse` at once can raise "AST constructor recursion
    depth mismatch" (python/cpython#106905); it broke lesson 01's replay under conn.map. Without
    the lock in `parse_python` this test fails on 3.11 within a few seconds."""
    src = "\n".join(
        f"def f{i}(x):\n    return [y * {i} for y in range(x) if y % 2 == {i % 2}]"
        for i in range(150)
    )
    errors: list[str] = []

    def work(_):
        for _ in range(60):
            if errors:
                return
            for _ in range(20):
                _FreedByTheCollector()
            try:
                parse_python(src)
            except SystemError as err:
                errors.append(str(err))

    parallel_map(work, range(4), workers=4, progress=False)
    assert errors == []
