"""Self-written tests (lesson 05): parsing the asserts a model writes, running a draft on them
in the sandbox, Reflexion's trace, and their accuracy against a known-correct solution."""

from __future__ import annotations

from reflect.judging.self_tests import (
    accuracy_on,
    parse_asserts,
    run_self_tests,
    run_tests_step,
    write_tests,
)
from reflect.records import Verdict
from reflect.tasks.task import _humaneval_problems, get_task
from reflect.testing import ScriptedChat

FACT = get_task("factorial")
GOOD = (
    'def calculate_factorial(n):\n    """n!"""\n    if n < 0:\n        raise ValueError(n)\n'
    "    return 1 if n < 2 else n * calculate_factorial(n - 1)\n"
)
REPLY = """Here are the tests:
```python
assert calculate_factorial(0) == 1
assert calculate_factorial(5) == 120
assert calculate_factorial(5) == 120
assert calculate_factorial(3) == 7
assert factorial(3) == 6
assert calculate_factorial(2 == 2
print(calculate_factorial(4))
x = 1
```"""


def test_only_whole_distinct_asserts_that_call_the_function_are_kept():
    assert parse_asserts(REPLY, "calculate_factorial") == [
        "assert calculate_factorial(0) == 1",
        "assert calculate_factorial(5) == 120",
        "assert calculate_factorial(3) == 7",
    ]
    assert parse_asserts(REPLY, "calculate_factorial", limit=1) == [
        "assert calculate_factorial(0) == 1"
    ]
    assert parse_asserts("no code at all", "f") == []
    only_asserts = "```python\nassert f([1.0, 2.0], 0.5) == False\nassert f([], 1) == False\n```"  # no def: not "example usage"
    assert parse_asserts(only_asserts, "f") == [
        "assert f([1.0, 2.0], 0.5) == False",
        "assert f([], 1) == False",
    ]


def test_a_draft_is_run_on_each_assert_and_the_trace_quotes_the_actual_output():
    asserts = ["assert calculate_factorial(0) == 1", "assert calculate_factorial(5) == 120"]
    wrong = run_self_tests(FACT, "def calculate_factorial(n):\n    return n\n", asserts)
    assert wrong.passed == [] and [a for a, _ in wrong.failed] == asserts and not wrong.all_passed
    assert wrong.trace() == (
        "Tests passed: none\n\nTests failed:\nassert calculate_factorial(0) == 1 # output: 0\n"
        "assert calculate_factorial(5) == 120 # output: 5"
    )
    right = run_self_tests(FACT, GOOD, asserts)
    assert right.all_passed and right.failed == []
    assert right.trace() == (
        "Tests passed:\nassert calculate_factorial(0) == 1\nassert calculate_factorial(5) == 120\n\n"
        "Tests failed: none"
    )  # on one line: never a bare header
    assert not run_self_tests(FACT, GOOD, []).all_passed  # no asserts is no evidence


def test_a_tests_step_records_the_count_and_an_empty_draft_fails_in_one_line():
    asserts = ["assert calculate_factorial(0) == 1", "assert calculate_factorial(3) == 7"]
    res, step = run_tests_step(4, FACT, GOOD, asserts)
    assert (step.index, step.role, step.kind, step.verdict) == (
        4,
        "tests",
        "check",
        Verdict("1/2 passed", False, passed=1, total=2),
    )
    assert (
        step.request == "\n".join(asserts)
        and step.reply == res.trace()
        and step.line().startswith(" 4 tests")
    )
    assert "[1/2 passed]" in step.line()
    empty, step = run_tests_step(
        0, FACT, "  \n", asserts
    )  # nothing to run: counted against every assert
    assert step.verdict == Verdict("0/2 passed", False, passed=0, total=2) and empty.failed == [
        ("(no code)", "no code")
    ]
    assert (
        step.reply == "Tests passed: none\n\nTests failed:\n(no code) # output: no code"
    )  # what the evaluator reads
    assert run_tests_step(0, FACT, GOOD, asserts[:1])[1].verdict.accepted  # every assert passed
    assert run_tests_step(0, FACT, GOOD, [])[1].verdict == Verdict(
        "0/0 passed", False, passed=0, total=0
    )  # no evidence


def test_a_raising_draft_is_reported_with_its_error():
    res = run_self_tests(
        FACT,
        "def calculate_factorial(n):\n    raise KeyError(n)\n",
        ["assert calculate_factorial(1) == 1"],
    )
    assert res.failed and "KeyError" in res.failed[0][1]


def test_accuracy_counts_the_asserts_a_correct_solution_passes():
    asserts = [
        "assert calculate_factorial(0) == 1",
        "assert calculate_factorial(3) == 7",
        "assert calculate_factorial(4) == 24",
    ]
    assert accuracy_on(FACT, asserts, GOOD) == 2 / 3
    assert accuracy_on(FACT, [], GOOD) is None
    problem = _humaneval_problems()[0]
    task = get_task(problem["task_id"])
    good_tests = [
        f"assert {task.entry_point}([1.0, 2.0, 3.0], 0.5) == False",
        f"assert {task.entry_point}([1.0, 2.8, 3.0], 0.3) == True",
    ]
    assert accuracy_on(task, good_tests, problem["prompt"] + problem["canonical_solution"]) == 1.0


def test_the_test_writer_sees_the_statement_only_and_its_temperature_is_stated():
    chat = ScriptedChat({"test_writer": [REPLY]})
    asserts, _ = write_tests(chat, FACT)
    assert len(asserts) == 3
    sent = "\n".join(m["content"] for m in chat.calls[0].messages)
    assert (
        FACT.prompt() in sent and "assert calculate_factorial(0) == 1" not in sent
    )  # no hidden test text
    assert all(line not in sent for line in FACT.tests.splitlines() if line.strip())
    assert chat.calls[0].params == {"temperature": 0.2, "max_tokens": 300, "seed": 42}
