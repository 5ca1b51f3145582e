"""The learner's loops (the solved cells of lesson 02) and the package's loops give the same run.

The package is the answer key: on the same scripted agents, the solution's `maker_checker_loop`
and `budget_loop` send every request `reflect.strategies.maker_checker` sends, in the same order,
and return the same draft, verdict and stop reason. Every combination of a few reviews (approvals,
look-alikes, rejections) and drafts (right, wrong, no code) is tried, not only the check's table.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import pytest

from course_checks import lesson02
from reflect.records import Stop
from reflect.strategies import maker_checker
from reflect.tasks.task import get_task
from reflect.testing import FakeReply, ScriptedChat

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "solutions" / "02_maker_checker.ipynb"
IMPORTS = (
    "from reflect.judging import TestGroundedCritic\n"
    "from reflect.strategies import GENERATOR_PROMPT, MAX_ITERATIONS, REVIEWER_PROMPT, maker_checker\n"
    "from reflect.tasks.extract import extract_code\n"
    "from reflect.testing import FakeReply\n"
)
REVIEWS = ("APPROVED", "**APPROVED**", "APPROVED? Not yet.", "Not APPROVED: n = 2.", "Fix n = 2.")
DRAFTS = (lesson02.WRONG, lesson02.RIGHT, lesson02.ECHO)
REASON = {
    Stop.ACCEPTED: "approved",
    Stop.MAX_ITERATIONS: "max_iterations",
    Stop.TOKEN_BUDGET: "budget",
}


def solved(*keys: str) -> dict:
    """The solved cells of the given exercises, run in one namespace (with the lesson's imports)."""
    cells = json.loads(LESSON.read_text(encoding="utf-8"))["cells"]
    namespace: dict = {}
    exec(IMPORTS, namespace)  # noqa: S102 - the course's own solution cells
    for key in keys:
        cell = next(c for c in cells if c["metadata"].get("reflect", {}).get("key") == key)
        exec("".join(cell["source"]), namespace)  # noqa: S102
    return namespace


def scripts():
    """Every (drafts, reviews, max_iterations) of up to three rounds from the small alphabets."""
    for rounds in (1, 2, 3):
        for reviews in itertools.product(REVIEWS, repeat=rounds):
            for drafts in itertools.product(DRAFTS, repeat=rounds):
                yield {"generator": list(drafts), "reviewer": list(reviews)}, rounds


def same_run(theirs, ours: ScriptedChat, mine: ScriptedChat, run) -> None:
    assert [(c.role, c.messages) for c in mine.calls] == [(c.role, c.messages) for c in ours.calls]
    draft, approved, reason = theirs
    assert reason == REASON[run.stop]
    assert approved is run.accepted
    assert draft.strip() == run.final_code.strip()
    assert len(mine.calls) == run.calls


def test_the_learners_loop_and_the_packages_give_the_same_run_on_every_script():
    loop = solved("02.1", "02.2")["maker_checker_loop"]
    task = get_task(lesson02.CHECK_TASK)
    n = 0
    for script, rounds in scripts():
        ours, mine = ScriptedChat(copy.deepcopy(script)), ScriptedChat(copy.deepcopy(script))
        run = maker_checker(
            ours, task.prompt(), entry_point=task.entry_point, max_iterations=rounds
        )
        same_run(loop(mine, task, max_iterations=rounds), ours, mine, run)
        n += 1
    assert n > 1000


@pytest.mark.parametrize("budget", [1, 40, 150, 269, 270, 271, 420, 600, 700, 1000, 10_000])
def test_the_learners_budget_and_the_packages_stop_at_the_same_call(budget):
    budget_loop = solved("02.1", "02.2", "02.3")["budget_loop"]
    task = get_task(lesson02.CHECK_TASK)
    for reviews in (["No."] * 4, ["No.", "No.", "APPROVED"]):
        for gen, rev in (((100, 50), (100, 20)), ((100, 50), (300, 100)), ((10, 5), (10, 5))):
            script = {
                "generator": [FakeReply(d, *gen) for d in (lesson02.WRONG, lesson02.BETTER) * 2],
                "reviewer": [FakeReply(r, *rev) for r in reviews],
            }
            ours, mine = ScriptedChat(copy.deepcopy(script)), ScriptedChat(copy.deepcopy(script))
            run = maker_checker(
                ours, task.prompt(), entry_point=task.entry_point, token_budget=budget
            )
            same_run(budget_loop(mine, task, budget), ours, mine, run)


def test_a_loop_that_differs_is_told_apart():
    """The comparison can fail: a loop that reads the verdict loosely does not give the same run."""
    namespace = solved("02.1", "02.2")
    namespace["approved"] = lambda review: "APPROVED" in review
    task = get_task(lesson02.CHECK_TASK)
    script = {"generator": [lesson02.WRONG] * 2, "reviewer": ["APPROVED? Not yet.", "APPROVED"]}
    ours, mine = ScriptedChat(copy.deepcopy(script)), ScriptedChat(copy.deepcopy(script))
    run = maker_checker(ours, task.prompt(), entry_point=task.entry_point)
    with pytest.raises(AssertionError):
        same_run(namespace["maker_checker_loop"](mine, task), ours, mine, run)
