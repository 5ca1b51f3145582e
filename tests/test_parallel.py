"""parallel_map: input order, workers actually overlap, errors and replay misses stop it."""

import threading
import time

import pytest

from reflect import ReplayMiss
from reflect.model.parallel import parallel_map


def test_results_come_back_in_input_order_whatever_finishes_first():
    def slow_first(i):
        time.sleep(0.05 * (5 - i))
        return i * i

    assert parallel_map(slow_first, range(6), workers=3, progress=False) == [0, 1, 4, 9, 16, 25]


def test_calls_overlap_up_to_the_number_of_workers():
    running, peak, lock = [0], [0], threading.Lock()

    def work(_):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.1)
        with lock:
            running[0] -= 1

    parallel_map(work, range(9), workers=3, progress=False)
    assert peak[0] == 3
    peak[0] = 0
    parallel_map(work, range(4), workers=1, progress=False)
    assert peak[0] == 1


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
