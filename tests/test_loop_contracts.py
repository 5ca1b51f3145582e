"""What loops and critics promise, pinned on scripted fakes that record every call's parameters:
the sampling each role asks for, the structured output the critic asks for, the stop reason,
the number of model calls, and which draft comes back."""

from dataclasses import dataclass

import pytest

from reflect.judging.controller import StopRule
from reflect.judging.critics import Evaluation, LLMCritic
from reflect.judging.critique import critique_schema
from reflect.model.llm import ModelError
from reflect.model.roles import SAMPLING
from reflect.records import Stop
from reflect.strategies.scored import scored_reflection
from reflect.tasks.task import get_task
from reflect.testing import ScriptedChat

TASK = get_task("factorial")


def draft(i: int) -> str:
    return f"```python\ndef calculate_factorial(n):\n    return {i}\n```"


@dataclass
class ScoreScript:
    """A critic that gives the scores it is told to, in order, and counts its calls."""

    scores: list
    calls: int = 0

    def evaluate(self, task, code):
        self.calls += 1
        score = self.scores.pop(0)
        if isinstance(score, BaseException):
            raise score
        return Evaluation(score, f"score {score}")


def run(scores, threshold=8, max_iterations=3, seed=42, **rule):
    from reflect.judging.controller import StopRule

    n = len(scores)
    chat = ScriptedChat({"generator": [draft(0)], "refiner": [draft(i) for i in range(1, n)]})
    critic = ScoreScript(list(scores))
    res = scored_reflection(
        chat,
        TASK,
        critic,
        StopRule(threshold=threshold, max_iterations=max_iterations, **rule),
        seed=seed,
    )
    return res, chat, critic


def test_generator_and_refiner_sample_as_the_lesson_states():
    res, chat, _ = run([5, 6, 7])
    assert {r: SAMPLING[r] for r in ("generator", "refiner")} == {
        "generator": {"temperature": 0.0, "max_tokens": 512},
        "refiner": {"temperature": 0.2, "max_tokens": 512},
    }
    assert [(c.role, c.params) for c in chat.calls] == [
        ("generator", {"temperature": 0.0, "max_tokens": 512, "seed": 42}),
        ("refiner", {"temperature": 0.2, "max_tokens": 512, "seed": 42}),
        ("refiner", {"temperature": 0.2, "max_tokens": 512, "seed": 42}),
    ]
    _, unseeded, _ = run([9], seed=None)
    assert unseeded.calls[0].params == {"temperature": 0.0, "max_tokens": 512}


def test_the_llm_critic_asks_for_schema_constrained_json_at_temperature_zero():
    chat = ScriptedChat(
        {"critic": ['{"score": 7, "issues": [], "strengths": [], "suggestion": "x"}'] * 3}
    )
    LLMCritic(chat).evaluate(TASK, "code")
    LLMCritic(chat, max_tokens=200).evaluate(TASK, "code")
    LLMCritic(chat, structured=False).evaluate(TASK, "code")
    structured, capped, plain = (c.params for c in chat.calls)
    schema = {
        "type": "json_schema",
        "json_schema": {"name": "critique", "schema": critique_schema()},
    }
    assert structured == {"temperature": 0, "response_format": schema}
    assert capped == {"temperature": 0, "max_tokens": 200, "response_format": schema}
    assert plain == {"temperature": 0}


@pytest.mark.parametrize(
    "scores, threshold, reason, calls, best",
    [
        ([8], 8, "accepted", 1, 1),  # a score equal to the threshold is accepted
        ([7, 8], 8, "accepted", 2, 2),
        (
            [5, 6, 7],
            8,
            "max_iterations",
            3,
            3,
        ),  # exactly max_iterations model calls, never one more
        ([7, 6, 6.5], 10, "converged", 3, 1),  # the best draft, not the last
        ([8, 6], 9, "regressed", 2, 1),  # dropped more than 20%: revert to the best
        ([4, 5, 6, 7], 10, "max_iterations", 4, 4),
    ],
)
def test_stop_reason_model_calls_and_returned_draft(scores, threshold, reason, calls, best):
    max_iterations = 4 if len(scores) == 4 else 3
    res, chat, critic = run(
        scores,
        threshold,
        max_iterations=max_iterations,
        regression_drop=0.2 if reason == "regressed" else 0.5,
    )
    assert res.stop.value == reason
    assert len(chat.calls) == calls == critic.calls
    assert StopRule().chosen(res).iteration == best and res.final_code.endswith(
        f"return {best - 1}\n"
    )


def test_scores_that_swing_stop_on_oscillation():
    res, chat, _ = run([3, 7, 3, 7], 10, max_iterations=6, regression_drop=0.9, patience=5)
    assert (
        res.stop is Stop.OSCILLATING
        and len(chat.calls) == 4
        and StopRule().chosen(res).iteration == 2
    )


@pytest.mark.parametrize("fail_at, kept", [(0, 0), (1, 1), (2, 2)])
def test_a_provider_error_ends_the_loop_with_its_own_reason_and_the_best_draft(fail_at, kept):
    chat = ScriptedChat(
        {
            "generator": [ModelError("down")] if fail_at == 0 else [draft(0)],
            "refiner": [draft(1), ModelError("down")][:2] if fail_at == 2 else [ModelError("down")],
        }
    )
    res = scored_reflection(chat, TASK, ScoreScript([5, 6]), None)
    assert res.stop is Stop.PROVIDER_ERROR and "down" in res.error
    drafts = StopRule().drafts(res.steps)
    assert len(drafts) == kept
    if kept:
        assert StopRule().chosen(res).score == max(a.score for a in drafts)
    else:
        assert res.final_code == "" and res.chosen == "no draft"


def test_a_critic_that_fails_keeps_the_unjudged_draft():
    res = scored_reflection(
        ScriptedChat({"generator": [draft(0)]}), TASK, ScoreScript([ModelError("critic down")])
    )
    assert res.stop is Stop.PROVIDER_ERROR and "critic down" in res.error
    assert res.final_code.endswith("return 0\n") and res.chosen == "iteration 1, unscored"
