"""Lesson 05's Reflexion agent on scripted models: the evaluator's explicit failure, what each
memory mode puts in the prompt, the window, the guards, and memory across sessions."""

from __future__ import annotations

import json

import pytest

from reflect.memory.store import MemoryStore, task_key
from reflect.strategies.reflexion import (
    MEMORY_MODES,
    Reflexion,
    attempt_prompt,
    parse_judgement,
)
from reflect.tasks.prompts import EVALUATOR_SYSTEM, evaluator_messages
from reflect.tasks.task import get_task
from reflect.testing import FakeReply, ScriptedChat

FACT = get_task("factorial")
ASSERTS = ["assert calculate_factorial(0) == 1", "assert calculate_factorial(4) == 24"]
RIGHT = "```python\ndef calculate_factorial(n):\n    '''n!'''\n    if n < 0:\n        raise ValueError(n)\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n```"


def wrong(k: int) -> str:
    return f"```python\ndef calculate_factorial(n):\n    return {k}\n```"


def verdict(score: float, v: str = "fail") -> str:
    return json.dumps(
        {
            "score": score,
            "verdict": v,
            "specific_issues": [f"issue at {score}"],
            "missing_elements": [],
        }
    )


def agent(**kw) -> Reflexion:
    return Reflexion(tests_for=lambda chat, task: ASSERTS, **kw)


def chat_for(drafts, verdicts, reflections=None) -> ScriptedChat:
    return ScriptedChat(
        {
            "generator": list(drafts),
            "evaluator": list(verdicts),
            "reflector": list(reflections or [f"reflection {i}" for i in range(10)]),
        }
    )


@pytest.mark.parametrize(
    "text, reason",
    [
        ("not json", "no JSON object"),
        ('{"score": 0.5}', "verdict must be"),
        ('{"score": 7, "verdict": "pass"}', "0 to 1"),
        ('{"score": true, "verdict": "pass"}', "0 to 1"),
        ("", "no JSON object"),
    ],
)
def test_an_unusable_evaluator_reply_is_an_explicit_fail_never_a_default_score(text, reason):
    j = parse_judgement(text)
    assert (
        j.score is None and j.detail["verdict"] == "fail" and reason in j.feedback and j.raw == text
    )


def test_a_valid_evaluator_reply_is_read_after_any_prose():
    j = parse_judgement(
        'Here: {"score": 0.25, "verdict": "fail", "specific_issues": ["0! is 1"], "missing_elements": ["docstring"]}'
    )
    assert (
        j.score,
        j.detail["verdict"],
        j.detail["specific_issues"],
        j.detail["missing_elements"],
        j.feedback,
    ) == (
        0.25,
        "fail",
        ("0! is 1",),
        ("docstring",),
        "0! is 1; docstring",
    )


def test_each_memory_mode_carries_what_it_says_and_nothing_else():
    prompts = {
        m: attempt_prompt(FACT, m, ["check n == 0"], "def calculate_factorial(n):\n    return 0\n")
        for m in MEMORY_MODES
    }
    assert prompts["none"] == FACT.prompt()
    assert "return 0" in prompts["last"] and "check n == 0" not in prompts["last"]
    assert "check n == 0" in prompts["reflections"] and "return 0" not in prompts["reflections"]
    assert (
        "return 0" in prompts["last+reflections"] and "check n == 0" in prompts["last+reflections"]
    )
    with pytest.raises(ValueError):
        attempt_prompt(FACT, "everything", [], None)


def test_a_passing_attempt_stops_the_loop_accepted():
    chat = chat_for([wrong(0), RIGHT], [verdict(0.2), verdict(1.0, "pass")])
    run = agent().run(FACT, chat)
    assert (
        run.stop.value == "accepted"
        and run.passed is True
        and run.final_code.endswith("calculate_factorial(n - 1)\n")
    )
    assert [c.role for c in chat.calls] == [
        "generator",
        "evaluator",
        "reflector",
        "generator",
        "evaluator",
    ]
    assert (
        "reflection 0" in chat.calls[3].messages[-1]["content"]
    )  # the next attempt carried the reflection


def test_the_evaluator_and_reflector_are_capped_and_see_the_trace_in_one_format():
    chat = chat_for([wrong(0), RIGHT], [verdict(0.2), verdict(1.0, "pass")])
    agent(evaluator_max_tokens=123, reflector_max_tokens=45).run(FACT, chat)
    first_eval, reflector, last_eval = chat.calls[1], chat.calls[2], chat.calls[4]
    assert (
        first_eval.params["max_tokens"],
        reflector.params["max_tokens"],
        last_eval.params["max_tokens"],
    ) == (123, 45, 123)
    code = RIGHT.split("```python\n")[1].split("```")[0]
    trace = "Tests passed:\n" + "\n".join(ASSERTS) + "\n\nTests failed: none"
    assert last_eval.messages == evaluator_messages(EVALUATOR_SYSTEM, FACT, code, trace)
    assert Reflexion().evaluator_max_tokens == 400 and Reflexion().reflector_max_tokens == 300


def test_the_evaluator_saying_pass_is_not_enough_when_the_agents_own_tests_fail():
    chat = chat_for([wrong(1), RIGHT], [verdict(0.9, "pass"), verdict(1.0, "pass")])
    run = agent().run(FACT, chat)
    assert (
        run.stop.value == "accepted" and len([c for c in chat.calls if c.role == "generator"]) == 2
    )


def test_the_window_keeps_only_the_last_reflections_in_the_prompt():
    chat = chat_for([wrong(i) for i in range(4)], [verdict(0.1 * (i + 1)) for i in range(4)])
    agent(window=2, max_attempts=4, patience=9).run(FACT, chat)
    last = [c for c in chat.calls if c.role == "generator"][-1].messages[-1]["content"]
    assert "reflection 1" in last and "reflection 2" in last and "reflection 0" not in last


def test_the_control_retries_with_a_new_seed_and_no_memory():
    chat = chat_for([wrong(i) for i in range(3)], [verdict(0.1 * (i + 1)) for i in range(3)])
    agent(memory_mode="none", max_attempts=3, patience=9).run(FACT, chat)
    gens = [c for c in chat.calls if c.role == "generator"]
    assert [c.params["seed"] for c in gens] == [43, 44, 45]
    assert all(c.messages[-1]["content"] == FACT.prompt() for c in gens)
    assert gens[0].params["temperature"] == 0.6
    assert [c.role for c in chat.calls].count(
        "reflector"
    ) == 0  # nothing reads a reflection in this mode


def test_last_attempt_mode_shows_the_old_code_and_asks_no_reflector():
    chat = chat_for([wrong(i) for i in range(3)], [verdict(0.1 * (i + 1)) for i in range(3)])
    agent(memory_mode="last", max_attempts=3, patience=9).run(FACT, chat)
    gens = [c for c in chat.calls if c.role == "generator"]
    assert (
        "return 1\n" in gens[2].messages[-1]["content"]
        and "return 0\n" not in gens[2].messages[-1]["content"]
    )
    assert "reflector" not in [c.role for c in chat.calls]


def test_a_drop_of_over_20_percent_reverts_to_the_best_and_stops():
    chat = chat_for([wrong(1), wrong(2)], [verdict(0.8), verdict(0.5)])
    run = agent().run(FACT, chat)
    assert (
        run.stop.value == "regressed"
        and run.final_code.endswith("return 1\n")
        and "attempt 1" in run.chosen
    )


@pytest.mark.parametrize("second, stop", [(0.63, "regressed"), (0.65, "max_iterations")])
def test_the_regression_bound_is_exactly_a_fifth_below_the_best(second, stop):
    run = agent(max_attempts=2).run(
        FACT, chat_for([wrong(1), wrong(2)], [verdict(0.8), verdict(second)])
    )
    assert run.stop.value == stop and run.final_code.endswith(
        "return 1\n"
    )  # 0.64 is the bound; the best is returned


def test_the_accepted_attempt_is_returned_even_below_an_earlier_score():
    """An earlier draft the evaluator scored higher but whose own tests failed is not the answer: the
    accepted one is."""
    run = agent().run(FACT, chat_for([wrong(1), RIGHT], [verdict(0.9), verdict(0.8, "pass")]))
    assert (
        run.stop.value == "accepted"
        and run.passed is True
        and run.chosen.startswith("attempt 2, score 0.8")
    )


def test_no_better_score_in_three_attempts_stops_and_says_so():
    chat = chat_for([wrong(i) for i in range(6)], [verdict(0.5)] * 6)
    run = agent(max_attempts=6, patience=3).run(FACT, chat)
    assert (
        run.stop.value == "converged" and len([c for c in chat.calls if c.role == "generator"]) == 4
    )
    assert "no better score in 3 attempts" in run.chosen


def test_the_token_budget_is_a_hard_cap_with_the_best_attempt_as_fallback():
    big = ScriptedChat(
        {
            "generator": [FakeReply(wrong(i), 3000, 100) for i in range(4)],
            "evaluator": [FakeReply(verdict(0.3), 500, 50)] * 4,
            "reflector": ["r"] * 4,
        }
    )
    run = agent(token_budget=3000, max_attempts=4, patience=9).run(FACT, big)
    assert (
        run.stop.value == "token_budget"
        and len([c for c in big.calls if c.role == "generator"]) == 1
    )
    assert run.final_code.endswith("return 0\n") and "3000-token budget" in run.chosen
    assert [c.role for c in big.calls] == [
        "generator",
        "evaluator",
    ]  # no reflection for an attempt that cannot come


@pytest.mark.parametrize(
    "budget, attempts, stop",
    [
        (7000, 2, "token_budget"),
        (7699, 2, "token_budget"),
        (7700, 3, "max_iterations"),
        (None, 3, "max_iterations"),
    ],
)
def test_the_budget_is_checked_before_an_attempt_would_pass_it(budget, attempts, stop):
    # an attempt costs 2,400 tokens (generator 2,000, evaluator 400) and the reflection before the next 250:
    # after two attempts 5,050 are spent, and the third (2,650 with its reflection) fits only in 7,700 or more
    chat = ScriptedChat(
        {
            "generator": [FakeReply(wrong(i), 1900, 100) for i in range(3)],
            "evaluator": [FakeReply(verdict(0.3), 350, 50)] * 3,
            "reflector": [FakeReply("r", 200, 50)] * 3,
        }
    )
    run = agent(token_budget=budget, max_attempts=3, patience=9).run(FACT, chat)
    assert run.stop.value == stop and sum(c.role == "generator" for c in chat.calls) == attempts
    assert budget is None or run.tokens <= budget


def test_the_attempt_cap_and_the_token_budget_are_different_stops():
    chat = chat_for([wrong(i) for i in range(3)], [verdict(0.3)] * 3)
    run = agent(max_attempts=3, patience=9).run(FACT, chat)
    assert run.stop.value == "max_iterations" and "the best so far" in run.chosen


def test_a_retry_that_repeats_earlier_code_is_marked_and_the_loop_goes_on():
    chat = chat_for(
        [wrong(1), wrong(2), wrong(1), RIGHT], [verdict(0.3)] * 3 + [verdict(1.0, "pass")]
    )
    run = agent(max_attempts=4, patience=9).run(FACT, chat)
    marks = [s.note for s in run.steps if s.role == "generator"]
    assert marks == [None, None, "same code as attempt 1", None] and run.stop.value == "accepted"
    assert all(
        s.verdict is None for s in run.steps if s.role == "generator"
    )  # a note, not a judgement


def test_memory_records_whether_each_attempt_passed_and_recalls_only_reflections(tmp_path):
    with MemoryStore(tmp_path / "memory.sqlite") as store:
        tests_pass_evaluator_fails = "```python\ndef calculate_factorial(n):\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n```"
        chat = chat_for(
            [wrong(0), tests_pass_evaluator_fails, RIGHT],
            [verdict(0.2), verdict(0.4), verdict(1.0, "pass")],
            ["r1", "r2"],
        )
        agent(store=store, max_attempts=3, patience=9).run(FACT, chat)
        key = task_key(FACT.prompt())
        assert [(e.attempt, e.reflection, e.passed) for e in store.history(key)] == [
            (1, "r1", False),
            (2, "r2", True),
            (3, "", True),
        ]
        assert [e.reflection for e in store.recall(key, 3)] == ["r1", "r2"]


def test_patience_at_the_attempt_cap_cannot_stop_the_loop_as_converged():
    # lesson 05's setting (3 attempts, patience 3): at most 2 attempts can follow the best, so converged never fires
    chat = chat_for([wrong(i) for i in range(3)], [verdict(0.5)] * 3)
    assert agent(max_attempts=3, patience=3).run(FACT, chat).stop.value == "max_iterations"


def test_no_prompt_ever_holds_the_hidden_tests():
    chat = chat_for([wrong(i) for i in range(4)], [verdict(0.1 * (i + 1)) for i in range(4)])
    agent(memory_mode="last+reflections", max_attempts=4, patience=9).run(FACT, chat)
    hidden = [
        line for line in FACT.tests.splitlines() if line.strip() and line.strip() not in ASSERTS
    ]
    sent = "\n".join(m["content"] for c in chat.calls for m in c.messages)
    assert not [line for line in hidden if line.strip() in sent]


def test_a_second_session_starts_from_the_stored_reflections(tmp_path):
    with MemoryStore(tmp_path / "memory.sqlite") as store:
        first = chat_for(
            [wrong(0), wrong(1)], [verdict(0.2), verdict(0.3)], ["handle n == 0: return 1"]
        )
        agent(store=store, session="monday", max_attempts=2).run(FACT, first)
        assert [e.reflection for e in store.history(task_key(FACT.prompt()))] == [
            "handle n == 0: return 1"
        ]
        second = chat_for([RIGHT], [verdict(1.0, "pass")])
        run = agent(store=store, session="tuesday").run(FACT, second)
        assert (
            "handle n == 0: return 1" in second.calls[0].messages[-1]["content"]
            and run.stop.value == "accepted"
        )
