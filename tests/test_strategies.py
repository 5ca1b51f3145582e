"""Every strategy of lessons 01-03 returns the same record, a Run, on the same scripted model."""

import json

import pytest

from reflect.judging.controller import StopRule
from reflect.judging.critics import LLMCritic, RuleCritic
from reflect.model.llm import ModelError
from reflect.records import Critic, Run, Stop, Strategy, Verdict
from reflect.strategies import MakerChecker, OneShot, ScoredReflection
from reflect.strategies.base import with_sampling
from reflect.tasks.task import Task, get_task
from reflect.testing import FakeReply, ScriptedChat
from tests.reference_solutions import CORRECT, FLAWED

TASK = get_task("factorial")
GOOD = f"```python\n{CORRECT['factorial']}```"
BAD = f"```python\n{FLAWED['factorial']}```"
CRIT = '{"score": %d, "issues": ["x"], "strengths": [], "suggestion": "fix"}'


def script(**roles):
    return ScriptedChat({r: [FakeReply(t, 11, 7) for t in texts] for r, texts in roles.items()})


def strategies(critic_chat):
    return [
        (OneShot(), script(generator=[GOOD])),
        (MakerChecker(), script(generator=[BAD, GOOD], reviewer=["Handle n < 0.", "APPROVED"])),
        (
            ScoredReflection(LLMCritic(critic_chat), StopRule(threshold=9)),
            script(generator=[BAD], refiner=[GOOD]),
        ),
    ]


@pytest.mark.parametrize("i", range(3))
def test_each_strategy_returns_a_run_with_the_same_fields(i):
    critic_chat = script(critic=[CRIT % 4, CRIT % 9])
    strategy, chat = strategies(critic_chat)[i]
    assert isinstance(strategy, Strategy)
    run = strategy.run(TASK, chat)
    assert isinstance(run, Run) and run.task_id == "factorial" and run.strategy == strategy.name
    assert (
        run.final_code == CORRECT["factorial"].lstrip("\n")
        or run.final_code.strip() == CORRECT["factorial"].strip()
    )
    assert run.passed is True
    expected_stop = {
        "one-shot": Stop.SINGLE_DRAFT,
        "maker-checker": Stop.ACCEPTED,
        "scored": Stop.ACCEPTED,
    }[run.strategy]
    assert run.stop is expected_stop
    model_calls = len(chat.calls) + len(critic_chat.calls)
    assert run.calls == model_calls and run.tokens == 18 * model_calls
    assert [s.index for s in run.steps] == list(range(len(run.steps)))
    assert Run.from_dict(json.loads(json.dumps(run.to_dict()))) == run
    assert run.show().startswith(f"{run.strategy} on factorial: stop={run.stop.value}")


def test_one_shot_and_maker_checker_send_the_sampling_their_lessons_state():
    one = script(generator=[GOOD])
    OneShot().run(TASK, one)
    assert [c.params for c in one.calls] == [
        {"temperature": 0.0, "seed": 42, "max_tokens": 512}
    ]  # lesson 01's call
    mc = script(generator=[BAD, GOOD], reviewer=["Handle n < 0.", "APPROVED"])
    MakerChecker().run(TASK, mc)
    assert [(c.role, c.params) for c in mc.calls] == [  # lesson 02's calls
        (role, {"temperature": 0.0, "seed": 42, "max_tokens": 512 if role == "generator" else 300})
        for role in ("generator", "reviewer", "generator", "reviewer")
    ]
    hot = script(generator=[GOOD])
    OneShot(temperature=0.7, seed=None, max_tokens=64).run(TASK, hot)
    assert hot.calls[0].params == {
        "temperature": 0.7,
        "max_tokens": 64,
    }  # no seed sent when none is set
    own = script(critic=["ok"])
    with_sampling(own, 0.0, 42, lambda role: 100)(
        [{"role": "user", "content": "x"}], role="critic", temperature=0.5
    )
    assert own.calls[0].params == {
        "temperature": 0.5,
        "seed": 42,
        "max_tokens": 100,
    }  # a call's own keyword wins


def test_roles_and_verdicts_are_kept_in_order():
    critic_chat = script(critic=[CRIT % 4, CRIT % 9])
    (_, _), (mc, mc_chat), (sc, sc_chat) = strategies(critic_chat)
    mc_run = mc.run(TASK, mc_chat)
    assert [(s.role, s.verdict) for s in mc_run.steps] == [
        ("generator", None),
        ("reviewer", Verdict("not approved", False)),
        ("generator", None),
        ("reviewer", Verdict("approved", True)),
    ]
    sc_run = sc.run(TASK, sc_chat)
    assert [(s.role, s.verdict) for s in sc_run.steps] == [
        ("generator", None),
        ("critic", Verdict("score 4", False, 4)),
        ("refiner", None),
        ("critic", Verdict("score 9", True, 9)),
    ]
    assert sc_run.tokens_by_role == {"generator": 18, "critic": 36, "refiner": 18}
    assert sc_run.chosen == "the best score, 9, at iteration 2"


def test_a_blank_task_makes_no_model_call():
    blank = Task("blank", "f", "   ", tests="")
    for strategy in (OneShot(), MakerChecker(), ScoredReflection(RuleCritic())):
        chat = ScriptedChat({})
        run = strategy.run(blank, chat)
        assert run.stop is Stop.BLANK_INPUT and run.calls == 0 and chat.calls == []


def test_the_scored_run_returns_the_best_draft_and_says_why():
    critic_chat = script(critic=[CRIT % 8, CRIT % 3])
    run = ScoredReflection(LLMCritic(critic_chat), StopRule(threshold=9)).run(
        TASK, script(generator=[GOOD], refiner=[BAD])
    )
    assert run.stop is Stop.REGRESSED and run.passed is True and "iteration 1" in run.chosen


def test_provider_errors_and_unusable_critics_have_their_own_stop():
    run = MakerChecker().run(TASK, ScriptedChat({"generator": [ModelError("down")]}))
    assert run.stop is Stop.PROVIDER_ERROR and "down" in run.error and run.passed is False
    junk = script(critic=["no json"] * 6)
    run = ScoredReflection(LLMCritic(junk), StopRule(max_iterations=3)).run(
        TASK, script(generator=[BAD], refiner=[BAD.replace("return", "x = 0\n    return"), GOOD])
    )
    unusable = run.steps[1].verdict
    assert run.stop is Stop.INVALID_CRITIC and (
        unusable.label,
        unusable.accepted,
        unusable.score,
    ) == ("unusable (2 calls)", None, None)
    assert "no JSON object" in unusable.reason


def test_a_critics_score_is_accepted_at_its_own_stop_rules_threshold():
    critic_chat = script(critic=[CRIT % 9, CRIT % 9, CRIT % 9])
    strict = ScoredReflection(LLMCritic(critic_chat), StopRule(threshold=10, max_iterations=2))
    run = strict.run(
        TASK, script(generator=[BAD], refiner=[BAD.replace("return", "x = 0\n    return")])
    )
    assert [s.verdict.accepted for s in run.steps if s.role == "critic"] == [
        False,
        False,
    ]  # 9 is below 10
    lenient = ScoredReflection(LLMCritic(script(critic=[CRIT % 9])), StopRule(threshold=9)).run(
        TASK, script(generator=[BAD])
    )
    assert [s.verdict.accepted for s in lenient.steps if s.role == "critic"] == [
        True
    ] and lenient.stop is Stop.ACCEPTED


def test_critics_satisfy_the_protocol():
    assert isinstance(RuleCritic(), Critic) and isinstance(LLMCritic(None), Critic)


def test_a_loop_called_as_a_function_returns_a_run_too():
    from reflect.strategies.maker_checker import maker_checker

    run = maker_checker(
        script(generator=[GOOD], reviewer=["APPROVED"]), "write factorial", task_id="factorial"
    )
    assert (
        run.stop is Stop.ACCEPTED
        and run.calls == 2
        and run.passed is None
        and run.task_id == "factorial"
    )


def first_request(chat) -> str:
    """The first generator call a fake received, as the bytes that matter: messages and parameters,
    with their JSON types (0 and 0.0 are different requests to a cache and a cassette)."""
    call = next(c for c in chat.calls if c.role == "generator")
    return json.dumps([call.messages, call.params], sort_keys=True)


def test_a_first_draft_is_one_request_in_every_lesson_and_strategy():
    from functools import partial

    from reflect.model.roles import sampling
    from reflect.strategies import graph as rg
    from reflect.strategies.maker_checker import maker_checker
    from reflect.strategies.one_shot import one_shot

    sent = {}
    for name, run in {
        "lesson 01": lambda chat: one_shot(partial(chat, **sampling("generator")), TASK),
        "lesson 02": lambda chat: maker_checker(
            lambda m, role: chat(m, role=role, **sampling(role)),
            TASK.prompt(),
            entry_point=TASK.entry_point,
            max_iterations=1,
        ),
        "OneShot": lambda chat: OneShot().run(TASK, chat),
        "MakerChecker": lambda chat: MakerChecker(max_iterations=1).run(TASK, chat),
        "ScoredReflection": lambda chat: ScoredReflection(RuleCritic(), StopRule(threshold=1)).run(
            TASK, chat
        ),
        "graph": lambda chat: rg.build_graph(
            rg.GraphParts(chat, RuleCritic(), threshold=1, task=TASK)
        ).invoke(rg.start_state(TASK.prompt(), 1), rg.run_config(1)),
    }.items():
        chat = script(generator=[GOOD], reviewer=["APPROVED"])
        run(chat)
        sent[name] = first_request(chat)
    assert len(set(sent.values())) == 1, sent
    assert json.loads(sent["graph"])[1] == {"temperature": 0.0, "seed": 42, "max_tokens": 512}


def test_each_role_sends_the_sampling_of_the_one_table():
    from reflect.model.roles import SAMPLING

    critic_chat = script(critic=[CRIT % 9])
    LLMCritic(critic_chat, structured=False).evaluate(TASK, CORRECT["factorial"])
    assert (
        json.dumps(critic_chat.calls[0].params)
        == json.dumps(SAMPLING["critic"])
        == '{"temperature": 0}'
    )
    mc = script(generator=[GOOD], reviewer=["APPROVED"])
    MakerChecker(max_iterations=1).run(TASK, mc)
    assert mc.calls[1].params == {**SAMPLING["reviewer"], "seed": 42}
