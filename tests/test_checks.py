"""Static ast checks: each returns a pass flag and a one-line reason; nothing is executed."""

from reflect.tasks import checks
from reflect.tasks.task import get_task
from tests.reference_solutions import CORRECT

GOOD = '''
def calculate_factorial(n: int) -> int:
    """Return n!."""
    if n < 0:
        raise ValueError("negative")
    return 1 if n == 0 else n * calculate_factorial(n - 1)
'''


def test_parses():
    assert checks.parses(GOOD).passed
    bad = checks.parses("def f(:\n")
    assert not bad.passed and bad.reason.startswith("SyntaxError line 1")


def test_has_function_and_arity():
    assert checks.has_function(GOOD, "calculate_factorial", 1).passed
    r = checks.has_function(GOOD, "calculate_factorial", 2)
    assert not r.passed and "takes 1 positional parameters, expected 2" in r.reason
    assert checks.has_function(GOOD, "fact").reason == "no function named 'fact'"


def test_docstring_and_type_hints():
    assert checks.has_docstring(GOOD, "calculate_factorial").passed
    assert not checks.has_docstring("def f(x):\n    return x\n", "f").passed
    assert checks.has_type_hints(GOOD, "calculate_factorial").passed
    r = checks.has_type_hints("def f(x, y: int) -> int:\n    return x\n", "f")
    assert not r.passed and r.reason == "parameters without type hints: x"
    assert (
        "no return type hint" in checks.has_type_hints("def f(x: int):\n    return x\n", "f").reason
    )


def test_forbidden_calls():
    assert not checks.no_forbidden_calls("def m(a, b):\n    return sorted(a + b)\n").passed
    r = checks.no_forbidden_calls("def m(a, b):\n    c = a + b\n    c.sort()\n    return c\n")
    assert not r.passed and r.reason == "uses forbidden the .sort() method on line 3"
    assert checks.no_forbidden_calls(CORRECT["merge_sorted"]).passed


def test_raises_required_exception():
    assert checks.raises_exception(GOOD, "calculate_factorial", "ValueError").passed
    assert not checks.raises_exception(
        "def calculate_factorial(n):\n    return 1\n", "calculate_factorial", "ValueError"
    ).passed


def test_run_checks_from_a_task_spec():
    results = get_task("factorial").static_checks(GOOD)
    assert [r.name for r in results] == [
        "parses",
        "has_function",
        "has_docstring",
        "raises_exception",
    ]
    assert all(r.passed for r in results)
    bad = get_task("merge_sorted").static_checks(
        "def merge_sorted_lists(a, b):\n    return sorted(a + b)\n"
    )
    assert [r.passed for r in bad] == [True, True, False]


def test_unparseable_code_fails_every_check_with_a_reason():
    for r in get_task("factorial").static_checks("def (:"):
        assert not r.passed and r.reason
