"""The task set: course tasks and HumanEval share one interface; tests stay hidden."""

import pytest

from reflect.tasks.task import course_tasks, get_task, humaneval_tasks


def test_seed_tasks_and_at_least_twelve_more():
    ids = [t.id for t in course_tasks()]
    assert {"factorial", "merge_sorted", "fibonacci"} <= set(ids)
    assert len(ids) >= 15 and len(set(ids)) == len(ids)
    assert {t.difficulty for t in course_tasks()} >= {"easy", "medium", "hard"}


def test_prompt_has_statement_and_requirements_but_never_tests():
    for t in course_tasks():
        p = t.prompt()
        assert t.statement in p and all(r in p for r in t.requirements)
        assert "assert " not in p and "raises(" not in p


def test_factorial_requirements_as_specified():
    reqs = " ".join(get_task("factorial").requirements)
    for word in ("integer", "docstring", "1 for n = 0", "ValueError"):
        assert word in reqs


def test_merge_forbids_sorted():
    assert get_task("merge_sorted").checks["forbidden"] == ["sorted", ".sort"]


def test_humaneval_offline_164_problems():
    tasks = humaneval_tasks()
    assert len(tasks) == 164
    t = get_task("HumanEval/0")
    assert t.entry_point == "has_close_elements" and "def check(candidate)" in t.tests
    assert t.statement in t.prompt()


def test_humaneval_canonical_solution_passes_and_a_wrong_one_fails():
    from reflect.tasks.task import _humaneval_problems

    p = _humaneval_problems()[0]
    t = get_task(p["task_id"])
    assert t.run(p["prompt"] + p["canonical_solution"]).passed
    assert not t.run(p["prompt"] + "    return False\n").passed


def test_unknown_task_is_a_clear_error():
    with pytest.raises(KeyError, match="No task 'nope'"):
        get_task("nope")
