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
    "from reflect.strategies import MAX_ITERATIONS, maker_checker\n"
    "from reflect.tasks.prompts import GENERATOR_PROMPT, REVIEWER_PROMPT\n"
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


def solved(*keys: str, lesson: Path = LESSON, imports: str = IMPORTS) -> dict:
    """The solved cells of the given exercises, run in one namespace (with the lesson's imports)."""
    cells = json.loads(lesson.read_text(encoding="utf-8"))["cells"]
    namespace: dict = {}
    exec(imports, namespace)  # noqa: S102 - the course's own solution cells
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


# Lesson 03: the solution's scored loop (with its stop_reason and best_attempt) and the package's
# scored_reflection, on every combination of a few critic verdicts and drafts.

LESSON03 = ROOT / "solutions" / "03_scored_critic.ipynb"
IMPORTS03 = (
    "import json\n"
    "from reflect.judging.controller import Draft\n"
    "from reflect.model.roles import sampling\n"
    "from reflect.tasks.prompts import REFINER_SYSTEM, refine_request\n"
    "from reflect.tasks.extract import extract_code\n"
    "from reflect.tasks.prompts import GENERATOR_PROMPT\n"
)
VERDICTS = ((9, "Fine."), (4, "Nested lists stay nested."), (6, "Closer."), (None, "unusable"))


def test_the_learners_scored_loop_and_the_packages_give_the_same_run_on_every_script():
    from course_checks import lesson03
    from reflect.judging.controller import StopRule
    from reflect.strategies import scored_reflection

    loop = solved("03.2", "03.3", "03.4", lesson=LESSON03, imports=IMPORTS03)["scored_loop"]
    task = get_task("flatten")
    drafts = (lesson03.D1, lesson03.D2, lesson03.D3)
    n = 0
    for cap in (1, 2, 3):
        for verdicts in itertools.product(VERDICTS, repeat=cap):
            for written in itertools.product(drafts, repeat=cap):
                script = {"generator": list(written[:1]), "refiner": list(written[1:])}
                ours, mine = (
                    ScriptedChat(copy.deepcopy(script)),
                    ScriptedChat(copy.deepcopy(script)),
                )
                critic_a, critic_b = lesson03._Critic(verdicts), lesson03._Critic(verdicts)
                rule = StopRule(threshold=8, max_iterations=cap)
                run = scored_reflection(ours, task, critic_a, rule)
                code, reason = loop(mine, task, critic_b, threshold=8, max_iterations=cap)
                assert [(c.role, c.messages, c.params) for c in mine.calls] == [
                    (c.role, c.messages, c.params) for c in ours.calls
                ]
                assert critic_b.seen == critic_a.seen
                assert reason == run.stop.value
                assert code.strip() == run.final_code.strip()
                n += 1
    assert n > 500


def test_the_learners_contract_agrees_with_the_packages_parser_on_generated_replies():
    from reflect.judging.critique import ParseFailure, parse_critique

    read_score = solved("03.1", lesson=LESSON03, imports=IMPORTS03)["read_score"]
    fields = {"issues": ["a"], "strengths": [], "suggestion": "b"}
    for score in (0, 1, 5, 10, 11, -3, 7.5, "eight", None):
        for drop in (None, "issues", "suggestion"):
            verdict = {"score": score, **fields}
            if drop:
                verdict.pop(drop)
            for wrap in ("{}", "Sure: {} Done.", "```json\n{}\n```", "{}"[:-1]):
                reply = (
                    wrap.replace("{}", json.dumps(verdict))
                    if "{}" in wrap
                    else json.dumps(verdict)[:-5]
                )
                parsed = parse_critique(reply)
                want = None if isinstance(parsed, ParseFailure) else parsed.score
                assert read_score(reply) == want, reply


def test_the_learners_revise_steps_send_the_packages_requests():
    """Lesson 03's solved `refine` and `fresh` and the package's `refine` and `fresh` (what lesson 04's graph
    revises with) send the same request for the same draft and feedback, draft after draft."""
    from course_checks import lesson03
    from reflect.strategies import fresh, refine

    def base_chat(messages, role="generator", **params):
        params.setdefault("max_tokens", 512)  # lesson 03's chat
        return inner(messages, role=role, **params)

    mine = solved("03.2", "03.3", "03.4", "03.6", lesson=LESSON03, imports=IMPORTS03)
    task = get_task("flatten")
    for theirs, ours in ((mine["refine"], refine), (mine["fresh"], fresh)):
        calls = []
        for answer in (theirs, ours):
            inner = ScriptedChat({"generator": [lesson03.D2] * 3, "refiner": [lesson03.D2] * 3})
            codes = [
                answer(base_chat, task, lesson03.D1, "1 of 2 visible checks failed", n)
                for n in (2, 3, 4)
            ]
            assert codes == [lesson03.D2.split("\n", 1)[1].removesuffix("```")] * 3
            calls.append([(c.role, c.messages, c.params) for c in inner.calls])
        assert calls[0] == calls[1], theirs.__name__
        assert len({repr(c) for c in calls[1]}) == (1 if ours is refine else 3)
