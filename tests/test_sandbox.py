"""The sandbox: verdicts, per-test outcomes, useful failure text, proven passes."""

import os
import threading

import pytest

from course_sandbox import Limits, run_code
from reflect.tasks.task import course_tasks, get_task
from tests.reference_solutions import CORRECT, FLAWED

TASKS = {t.id: t for t in course_tasks()}


def test_every_course_task_has_a_reference_and_a_flawed_draft():
    assert set(CORRECT) == set(TASKS) == set(FLAWED)


@pytest.mark.parametrize("task_id", sorted(CORRECT))
def test_reference_solution_passes_hidden_tests(task_id):
    res = TASKS[task_id].run(CORRECT[task_id])
    assert res.passed, res.feedback()
    assert res.n_passed == len(res.tests) > 0


@pytest.mark.parametrize("task_id", sorted(FLAWED))
def test_flawed_draft_fails_hidden_tests(task_id):
    # 1 s: two flawed drafts are too slow for a hidden test, and burn the whole timeout's CPU before they fail
    res = TASKS[task_id].run(FLAWED[task_id], Limits(timeout_s=1))
    assert not res.passed
    assert res.failures or res.error


def test_failure_text_names_call_expected_and_actual():
    res = get_task("factorial").run("def calculate_factorial(n):\n    '''d'''\n    return n\n")
    text = res.feedback()
    assert "calculate_factorial(5): expected 120, got 5" in text
    assert (
        "calculate_factorial(-1): expected raises ValueError, got returned -1 without raising"
        in text
    )
    assert text.splitlines()[0].startswith("6 of 8 hidden checks failed")


def test_exception_in_code_is_reported_with_type_and_message():
    res = get_task("median").run("def median(numbers):\n    return numbers[0] / 0\n")
    fail = res.failures[0]
    assert fail.error_type == "ZeroDivisionError"
    assert "division by zero" in fail.actual


def test_syntax_error_is_a_load_error_not_a_crash():
    res = run_code("def f(:\n", "assert f() == 1\n", "f")
    assert not res.passed
    assert res.error.startswith("The code did not load: SyntaxError")


def test_missing_entry_point_is_reported():
    res = run_code("def g():\n    return 1\n", "assert candidate() == 1\n", "f")
    assert not res.passed and "no function named 'f'" in res.error


def test_humaneval_style_check_function():
    tests = "METADATA = {}\n\ndef check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(0, 0) == 0\n"
    ok = run_code("def add(a, b):\n    return a + b\n", tests, "add")
    bad = run_code("def add(a, b):\n    return a * b\n", tests, "add")
    assert ok.passed and len(ok.tests) == 2
    assert (
        not bad.passed and bad.failures[0].describe() == "FAIL candidate(2, 3): expected 5, got 6"
    )


def test_zero_tests_is_not_a_pass():
    assert not run_code("x = 1\n", "").passed


def test_stdout_is_captured_and_capped():
    res = run_code("print('x' * 100000)\ndef f():\n    return 1\n", "assert f() == 1\n", "f")
    assert res.passed
    assert len(res.stdout) < 5000 and "truncated" in res.stdout


def test_int_and_float_compare_like_python():
    assert run_code("def f():\n    return 3\n", "assert f() == 3.0\n", "f").passed


def test_a_call_that_mutates_its_argument_is_seen_by_the_tests():
    tests = "data = [3, 1, 2]\nassert f(data) == 3\nassert data == [3, 1, 2]\n"
    sorts_in_place = run_code("def f(xs):\n    xs.sort()\n    return max(xs)\n", tests, "f")
    copies = run_code("def f(xs):\n    return max(sorted(xs))\n", tests, "f")
    assert (
        not sorts_in_place.passed
        and sorts_in_place.failures[0].describe() == "FAIL data: expected [3, 1, 2], got [1, 2, 3]"
    )
    assert copies.passed, copies.feedback()


def test_a_mutation_into_something_not_plain_is_a_change_too():
    tests = "d = {'a': 1}\nf(d)\nassert d == {'a': 1}\n"
    res = run_code("def f(d):\n    d['a'] = object()\n", tests, "f")
    assert not res.passed


def test_an_exception_subclass_is_caught_as_its_builtin_base():
    code = "class BadRoman(ValueError):\n    pass\ndef f(s):\n    raise BadRoman('not a numeral: ' + s)\n"
    res = run_code(code, "with raises(ValueError):\n    f('Z')\nassert f('I') == 1\n", "f")
    assert res.tests[0].passed
    assert res.tests[1].describe() == "FAIL assert f('I') == 1: raised BadRoman: not a numeral: I"


def test_an_exception_outside_exception_never_reaches_the_judge_as_itself():
    res = run_code("def f():\n    raise KeyboardInterrupt('stop')\n", "assert f() == 1\n", "f")
    assert not res.passed and res.tests[0].actual == "raised KeyboardInterrupt: stop"


def test_plain_values_cross_exactly():
    # the set holds values whose hashes do not depend on PYTHONHASHSEED: `repr` runs in the candidate's
    # process (seed 0) and on the judge's side (any seed, under pytest-xdist a random one), and a set of
    # strings or bytes would list its items in another order on each side
    value = "{1: [2.5, -0.0, (3, 'x'), b'y'], 'k': {7, frozenset({1})}, 'c': 1+2j, 'big': 7 ** 400, 'ba': bytearray(b'z')}"
    res = run_code(
        f"def f():\n    return {value}\n",
        f"assert f() == {value}\nassert repr(f()) == repr({value})\n",
        "f",
    )
    assert res.passed, res.feedback()


def test_a_generator_result_is_not_plain():
    res = run_code("def f():\n    return (i for i in range(3))\n", "assert f() == [0, 1, 2]\n", "f")
    assert res.failures[0].actual == "a generator object (only plain values count)"


def test_humaneval_tests_use_the_prompts_helpers_from_the_trusted_setup():
    from reflect.tasks.task import _humaneval_problems as problems
    from reflect.tasks.task import humaneval_tasks

    by_id = {p["task_id"]: p for p in problems()}
    for task in humaneval_tasks():
        if task.id not in ("HumanEval/0", "HumanEval/32", "HumanEval/38", "HumanEval/50"):
            continue
        p = by_id[task.id]
        good = task.run(p["prompt"] + p["canonical_solution"])
        assert good.passed, (task.id, good.feedback())
        # a solution that also redefines the prompt's helper cannot change what the tests use
        cheat = p["prompt"] + "    return None\n"
        if task.id == "HumanEval/32":
            cheat += "\ndef poly(xs, x):\n    return 0\n"
        assert not task.run(cheat).passed, task.id


def test_the_wire_format_round_trips_plain_data_and_rejects_the_rest():
    import json

    from hypothesis import given
    from hypothesis import strategies as st

    from course_sandbox._worker import NotPlain, decode, encode

    leaves = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text()
        | st.binary()
    )
    values = (
        st.recursive(
            leaves,
            lambda kids: st.lists(kids) | st.tuples(kids, kids) | st.dictionaries(st.text(), kids),
            max_leaves=20,
        )
        | st.sets(st.integers() | st.text())
        | st.frozensets(st.booleans() | st.none())
    )

    @given(values)
    def round_trip(v):
        back = decode(encode(v))
        assert back == v and type(back) is type(v)
        assert isinstance(v, set | frozenset) or repr(back) == repr(
            v
        )  # a set's repr follows insertion order

    round_trip()
    huge = [
        10**5000,
        2,
    ]  # beyond the 4,300 digits int <-> str allows: travels as hex, in a list too
    assert decode(json.loads(json.dumps(encode(huge)))) == huge
    for junk in ({"i": "1"}, {"q": 1}, [1, 2], 1.5, {"l": 3}, {"d": [[1]]}):
        with pytest.raises(ValueError):
            decode(junk)
    with pytest.raises(NotPlain):
        encode(object())


def test_the_worker_reads_request_lines_whole_and_in_order_from_one_buffered_pipe():
    import json

    from course_sandbox._worker import _read_line

    big = json.dumps({"args": [{"l": list(range(300_000))}]}).encode()
    read_fd, write_fd = os.pipe()

    def write():
        with os.fdopen(write_fd, "wb") as pipe:
            pipe.write(b"first\n" + big + b"\nlast\n")

    writer = threading.Thread(target=write)
    writer.start()
    with os.fdopen(read_fd, "rb", buffering=1 << 16) as channel:
        got = [_read_line(channel) for _ in range(4)]
    writer.join()
    assert got == [b"first", big, b"last", b""]


def test_a_rigged_object_inside_a_compared_structure_still_equals_nothing():
    code = "class Yes:\n    def __eq__(self, other):\n        return True\n    __hash__ = object.__hash__\ndef f():\n    return Yes()\n"
    res = run_code(code, "assert (f(), 0) == (1, 0)\nassert 1 in [f()]\nassert f() != 1\n", "f")
    assert [t.passed for t in res.tests] == [False, False, True]


def test_the_same_code_and_tests_are_judged_once_and_each_caller_gets_its_own_copy(monkeypatch):
    from course_sandbox import runner

    monkeypatch.setattr(runner, "_JUDGED", {})
    calls = []
    real = runner._run
    monkeypatch.setattr(runner, "_run", lambda *a: calls.append(a) or real(*a))
    code = "def f(x):\n    return x + 1\n"
    first = run_code(code, "assert f(1) == 2")
    first.tests.clear()  # a caller changing its result changes no one else's
    again = run_code(code, "assert f(1) == 2")
    assert len(calls) == 1 and again.passed and len(again.tests) == 1
    for other in (  # any other code, tests, entry point, limits or setup is a run of its own
        ("def f(x):\n    return x\n", "assert f(1) == 2", None, None, ""),
        (code, "assert f(1) == 3", None, None, ""),
        (code, "def check(candidate):\n    assert candidate(1) == 2", "f", None, ""),
        (code, "assert f(1) == 2", None, Limits(timeout_s=3), ""),
        (code, "assert f(1) == 2", None, None, "X = 1"),
    ):
        run_code(*other)
    assert len(calls) == 6
    assert not run_code(code, "assert f(1) == 3").passed
