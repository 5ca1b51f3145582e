"""The sandbox: verdicts, per-test outcomes, useful failure text, proven passes."""

import pytest

from reflect.sandbox import Limits, run_code
from reflect.tasks import course_tasks, get_task
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
    res = TASKS[task_id].run(FLAWED[task_id], Limits(timeout_s=5))
    assert not res.passed
    assert res.failures or res.error


def test_failure_text_names_call_expected_and_actual():
    res = get_task("factorial").run("def calculate_factorial(n):\n    '''d'''\n    return n\n")
    text = res.feedback()
    assert "calculate_factorial(5): expected 120, got 5" in text
    assert "calculate_factorial(-1): expected raises ValueError, got returned -1 without raising" in text
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
    assert not bad.passed and bad.failures[0].describe() == "FAIL candidate(2, 3): expected 5, got 6"


def test_zero_tests_is_not_a_pass():
    assert not run_code("x = 1\n", "").passed


def test_stdout_is_captured_and_capped():
    res = run_code("print('x' * 100000)\ndef f():\n    return 1\n", "assert f() == 1\n", "f")
    assert res.passed
    assert len(res.stdout) < 5000 and "truncated" in res.stdout


def test_int_and_float_compare_like_python():
    assert run_code("def f():\n    return 3\n", "assert f() == 3.0\n", "f").passed
