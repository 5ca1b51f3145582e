"""The evaluators and the scored loop on fakes: no model needed."""

import json

import pytest

from reflect.judging.controller import StopRule
from reflect.judging.critics import (
    MEDICAL_CRITERIA,
    HybridCritic,
    LLMCritic,
    RuleCritic,
    TestGroundedCritic,
    VotingCritic,
    split_tests,
)
from reflect.model.cache import CachedChat
from reflect.model.llm import ModelError
from reflect.records import Stop
from reflect.strategies.scored import scored_reflection
from reflect.tasks.prompts import TEXT_CRITIC_PROMPT
from reflect.tasks.task import get_task
from reflect.testing import FakeReply, ScriptedChat
from tests.reference_solutions import CORRECT, FLAWED

TASK = get_task("factorial")


def crit(score, issues=("x",)):
    return json.dumps(
        {"score": score, "issues": list(issues), "strengths": [], "suggestion": "fix x"}
    )


def test_llm_critic_asks_for_schema_json_and_parses():
    chat = ScriptedChat({"critic": [crit(6)]})
    ev = LLMCritic(chat).evaluate(TASK, CORRECT["factorial"])
    assert ev.score == 6 and "Most important fix: fix x" in ev.feedback
    assert ev.tokens > 0
    # the critic sent the schema in the local server's form
    assert chat.calls[0].role == "critic"


def test_llm_critic_repairs_once_then_gives_up_without_looping():
    chat = ScriptedChat(
        {
            "critic": [
                "I like it, 9/10",
                '{"score": 0, "issues": [], "strengths": [], "suggestion": ""}',
                crit(9),
            ]
        }
    )
    ev = LLMCritic(chat).evaluate(TASK, "x")
    assert (
        ev.score is None
        and "unusable" in ev.feedback
        and "greater than or equal to 1" in ev.feedback
    )
    assert len(chat.calls) == 2  # one call + one repair, never more
    repaired = LLMCritic(ScriptedChat({"critic": ["nope", crit(8)]})).evaluate(TASK, "x")
    assert repaired.score == 8 and repaired.detail["repairs"] == 1


def test_rule_critic():
    good = RuleCritic().evaluate(TASK, CORRECT["factorial"])
    bad = RuleCritic().evaluate(TASK, FLAWED["factorial"])
    assert good.score == 10 and bad.score < 10 and "no docstring" in bad.feedback


def test_hybrid_caps_the_llm_when_rules_fail():
    chat = ScriptedChat({"critic": [crit(9)]})
    ev = HybridCritic(LLMCritic(chat)).evaluate(TASK, FLAWED["factorial"])
    assert ev.score == 5 and "Static checks failed" in ev.feedback
    unparsable = HybridCritic(LLMCritic(ScriptedChat({"critic": []}))).evaluate(TASK, "def (:")
    assert unparsable.score == 1  # no model call for code that does not parse
    clean = HybridCritic(LLMCritic(ScriptedChat({"critic": [crit(7)]}))).evaluate(
        TASK, CORRECT["factorial"]
    )
    assert (
        clean.score == 7
        and "Static checks" not in clean.feedback
        and clean.feedback.startswith("Score 7/10")
    )


def test_test_grounded_critic_uses_only_visible_tests():
    visible, held_out = split_tests(TASK.tests)
    assert (
        visible.strip()
        and held_out.strip()
        and set(visible.splitlines()).isdisjoint(held_out.splitlines())
    )
    vowels = get_task("count_vowels")
    ev = TestGroundedCritic().evaluate(vowels, FLAWED["count_vowels"])
    assert (
        ev.score < 10
        and "visible checks failed" in ev.feedback
        and 'count_vowels("AEIOU"): expected 5, got 0' in ev.feedback
    )
    assert TestGroundedCritic().evaluate(vowels, CORRECT["count_vowels"]).score == 10
    # the factorial flaw (no ValueError) sits in the held-out half: visible tests alone miss it
    assert TestGroundedCritic().evaluate(TASK, FLAWED["factorial"]).score == 10
    assert not TASK.run(FLAWED["factorial"]).passed


def test_voting_critic_mean_and_spread():
    chat = ScriptedChat({"critic": [crit(4), crit(8), "garbage", "garbage"]})
    ev = VotingCritic(chat).evaluate(TASK, "x")
    assert (
        ev.score == 6 and ev.detail["spread"] == 4 and ev.detail["scores"] == [4, 8]
    )  # the spread is highest minus lowest


def test_a_vote_is_the_mean_of_the_usable_scores_and_their_spread():
    """VotingCritic (lesson 03b): the exact mean of the usable scores, and the spread as highest minus lowest,
    never a standard deviation; None without two usable scores, and no score without one."""
    ev = VotingCritic(ScriptedChat({"critic": [crit(3), crit(5), crit(10)]})).evaluate(TASK, "x")
    assert (ev.score, ev.detail["spread"]) == (6, 7.0)
    ev = VotingCritic(ScriptedChat({"critic": [crit(7)] + ["no JSON"] * 12})).evaluate(TASK, "x")
    assert (ev.score, ev.detail["spread"], ev.detail["scores"]) == (7, None, [7])
    ev = VotingCritic(ScriptedChat({"critic": ["no JSON"] * 12})).evaluate(TASK, "x")
    assert ev.score is None


def fenced(code):
    return f"```python\n{code}```"


def test_scored_loop_improves_and_stops_on_threshold():
    vowels = get_task("count_vowels")
    chat = ScriptedChat(
        {
            "generator": [fenced(FLAWED["count_vowels"])],
            "refiner": [fenced(CORRECT["count_vowels"])],
        }
    )
    res = scored_reflection(chat, vowels, TestGroundedCritic(), StopRule(threshold=10))
    assert (
        res.stop is Stop.ACCEPTED and StopRule().chosen(res).iteration == 2 and len(res.drafts) == 2
    )
    refiner_msg = chat.calls[1].messages[1]["content"]
    assert (
        "Your previous attempt" in refiner_msg
        and "Critic feedback" in refiner_msg
        and "do not start over" in refiner_msg
    )


def test_scored_loop_reverts_on_regression_and_survives_provider_errors():
    crit_chat = ScriptedChat({"critic": [crit(8), crit(3)]})
    chat = ScriptedChat(
        {"generator": [fenced(CORRECT["factorial"])], "refiner": [fenced(FLAWED["factorial"])]}
    )
    res = scored_reflection(chat, TASK, LLMCritic(crit_chat), StopRule(threshold=9))
    assert (
        res.stop is Stop.REGRESSED
        and StopRule().chosen(res).iteration == 1
        and res.final_code == res.drafts[0]
    )
    err = ScriptedChat(
        {"generator": [fenced(CORRECT["factorial"])], "refiner": [ModelError("down")]}
    )
    res = scored_reflection(err, TASK, RuleCritic(), StopRule(threshold=11, max_iterations=3))
    assert (
        res.stop is Stop.PROVIDER_ERROR
        and StopRule().chosen(res).iteration == 1
        and "down" in res.error
    )
    assert "calculate_factorial" in res.final_code


def test_cached_chat_reuses_temperature_zero_replies_only():
    inner = ScriptedChat({"critic": [crit(7), crit(5)], "refiner": ["a", "b"]})
    chat = CachedChat(inner)
    first = LLMCritic(chat).evaluate(TASK, "x")
    again = LLMCritic(chat).evaluate(TASK, "x")
    assert first.score == again.score == 7 and chat.hits == 1 and again.tokens == first.tokens
    assert LLMCritic(chat).evaluate(TASK, "y").score == 5  # another draft is another request
    msgs = [{"role": "user", "content": "same"}]
    assert [chat(msgs, role="refiner", temperature=0.2).text for _ in range(2)] == [
        "a",
        "b",
    ]  # sampling: never cached
    assert chat.hits == 1
    seeded = CachedChat(ScriptedChat({"refiner": ["a", "b", "c"]}), seeded=True)
    assert [seeded(msgs, role="refiner", temperature=0.2, seed=s).text for s in (1, 1, 2)] == [
        "a",
        "a",
        "b",
    ]
    assert (
        seeded(msgs, role="refiner", temperature=0.2).text == "c" and seeded.hits == 1
    )  # no seed: not reused


def test_llm_critic_judges_plain_text_with_domain_criteria_and_caps_tokens():
    chat = ScriptedChat({"critic": [crit(4, ["does not recommend a doctor"])]})
    critic = LLMCritic(
        chat, criteria=MEDICAL_CRITERIA, system_prompt=TEXT_CRITIC_PROMPT, max_tokens=200
    )
    ev = critic.evaluate("Can I take ibuprofen with a cold?", "Yes, take as much as you like.")
    system, user = (m["content"] for m in chat.calls[0].messages)
    assert (
        "recommend seeing a doctor" in system
        and "Question:\nCan I take ibuprofen" in user
        and "```" not in user
    )
    assert ev.score == 4 and "does not recommend a doctor" in ev.feedback


def test_scored_loop_can_start_from_an_existing_draft_and_ends_cleanly_on_critic_errors():
    vowels = get_task("count_vowels")
    chat = ScriptedChat({"refiner": [fenced(CORRECT["count_vowels"])]})
    res = scored_reflection(
        chat,
        vowels,
        TestGroundedCritic(),
        StopRule(threshold=10),
        first_draft=FLAWED["count_vowels"],
    )
    assert [c.role for c in chat.calls] == ["refiner"]  # no generator call
    first = StopRule().drafts(res.steps)[0]
    assert (first.code, first.tokens, res.steps[0].kind, res.steps[0].role) == (
        FLAWED["count_vowels"],
        0,
        "input",
        "given",
    )
    assert res.stop is Stop.ACCEPTED and StopRule().chosen(res).iteration == 2 and res.calls == 1
    down = LLMCritic(ScriptedChat({"critic": [ModelError("critic down")]}))
    res = scored_reflection(ScriptedChat({}), TASK, down, first_draft=CORRECT["factorial"])
    assert res.stop is Stop.PROVIDER_ERROR and "critic down" in res.error
    assert (
        res.final_code == CORRECT["factorial"] and res.chosen == "iteration 1, unscored"
    )  # the draft is kept


def test_cached_chat_sends_a_request_in_flight_once_whatever_the_threads_do():
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor

    calls, lock = [], threading.Lock()

    def slow(messages, role="critic", **params):
        with lock:
            calls.append(messages[0]["content"])
        time.sleep(0.1)
        return FakeReply(messages[0]["content"].upper(), 10, 2)

    cached = CachedChat(slow)
    ask = lambda text: cached([{"role": "user", "content": text}], temperature=0).text  # noqa: E731
    with ThreadPoolExecutor(8) as pool:
        out = list(pool.map(ask, ["a"] * 6 + ["b"] * 2))
    assert out == ["A"] * 6 + ["B"] * 2
    assert sorted(calls) == ["a", "b"] and cached.hits == 6


def test_cached_chat_does_not_cache_a_failed_call():
    replies = [ModelError("down"), FakeReply("ok", 1, 1)]

    def flaky(messages, role="critic", **params):
        item = replies.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    cached = CachedChat(flaky)
    with pytest.raises(ModelError):
        cached([{"role": "user", "content": "x"}], temperature=0)
    assert (
        cached([{"role": "user", "content": "x"}], temperature=0).text == "ok" and cached.hits == 0
    )


def test_a_critic_counts_every_call_it_made_repairs_and_voters_included():
    replies = iter([("not json", 100, 7), (crit(6), 120, 30), (crit(8), 90, 20), (crit(4), 80, 10)])

    def chat(messages, role, **params):
        text, prompt, completion = next(replies)
        return FakeReply(text, prompt, completion)

    repaired = LLMCritic(chat).evaluate(TASK, CORRECT["factorial"])
    assert (repaired.score, repaired.usage, repaired.tokens) == (6, (220, 37, 2), 257)
    replies = iter([(crit(6), 120, 30), (crit(8), 90, 20), (crit(4), 80, 10)])
    voted = VotingCritic(chat).evaluate(TASK, CORRECT["factorial"])
    assert (voted.score, voted.usage, voted.tokens) == (6, (290, 60, 3), 350)
    assert RuleCritic().evaluate(TASK, CORRECT["factorial"]).usage == (0, 0, 0)
