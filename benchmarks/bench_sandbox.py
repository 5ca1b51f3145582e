"""make bench-sandbox: what one sandboxed test run costs, so loops can budget for it.

Prints the median wall time of a full hidden-test run (process start, limits, guard, tests,
teardown) for every course task's reference-quality solution, a run that fails, and how
close the timeout is kept for an infinite loop. Rerunnable; not a pass/fail test.
"""

from __future__ import annotations

import statistics
import time

from course_sandbox import Limits, run_code
from reflect.tasks.task import course_tasks, get_task

REPEATS = 5


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    task = get_task("count_vowels")
    good = "def count_vowels(text):\n    return sum(c in 'aeiou' for c in text.lower())\n"
    bad = "def count_vowels(text):\n    return 0\n"
    loop = "def count_vowels(text):\n    while True:\n        pass\n"
    # its hidden tests pass a list of a million ints through the pipe (7 s when the worker read
    # its requests one byte per system call, 1.1 s buffered, on an AMD EPYC core)
    search = get_task("binary_search")
    halving = (
        "def binary_search(items, target):\n    lo, hi = 0, len(items) - 1\n    while lo <= hi:\n"
        "        mid = (lo + hi) // 2\n        if items[mid] == target:\n            return mid\n"
        "        if items[mid] < target:\n            lo = mid + 1\n        else:\n            hi = mid - 1\n"
        "    return -1\n"
    )
    runs = {
        "passing run (5 checks)": [timed(lambda: task.run(good)) for _ in range(REPEATS)],
        "failing run (5 checks)": [timed(lambda: task.run(bad)) for _ in range(REPEATS)],
        "infinite loop, timeout 2 s": [
            timed(lambda: task.run(loop, Limits(timeout_s=2))) for _ in range(2)
        ],
        "binary_search, 1M-element arg": [timed(lambda: search.run(halving)) for _ in range(3)],
    }
    print(f"{'case':<30}{'median s':>10}{'max s':>8}")
    for name, times in runs.items():
        print(f"{name:<30}{statistics.median(times):>10.3f}{max(times):>8.3f}")
    t = time.perf_counter()
    n = 0
    for tk in course_tasks():
        run_code("pass\n", tk.tests, None)
        n += 1
    print(f"\nall {n} course test suites against an empty module: {time.perf_counter() - t:.2f} s")


if __name__ == "__main__":
    main()
