"""Lesson 03's exercise checks on their own, without the notebook: the fresh-attempt check fails the prompt
builder that said "failed these checks" over a pass, and passes a right answer that fixed nothing; the
weighted total accepts both roundings of a tie and fails a truncation; the controller check fails a convergence
rule that ignores `patience`, reads only the last score, or scores an unusable round 0; a call in the wrong role reaches its own message."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import pytest

from course_checks import lesson03 as ex
from reflect.model.accounting import CallRecord, Ledger
from reflect.model.roles import sampling
from reflect.tasks.extract import extract_code
from reflect.tasks.prompts import GENERATOR_PROMPT


@pytest.fixture(autouse=True)
def _recorded_lesson_01(monkeypatch):
    """The checks read lesson 01's failing drafts: the committed recording's, not a live run's in build/."""
    monkeypatch.setenv("COURSE_BACKEND", "replay")


def fresh_attempt_as(role):
    """A right fresh attempt, but its one call goes as `role` with that role's sampling."""

    def fresh_attempt(chat, task, visible):
        if visible.passed:
            return None
        message = f"{task.prompt()}\n\nThese checks failed:\n{visible.feedback(label='visible')}"
        reply = chat(
            [{"role": "system", "content": GENERATOR_PROMPT}, {"role": "user", "content": message}],
            role=role,
            **sampling(role),
        )
        return extract_code(reply.text, task.entry_point).code

    return fresh_attempt


right_fresh_attempt = fresh_attempt_as("generator")


def old_fresh_attempt(chat, task, visible):  # lesson 03 at aa79862: no guard
    message = (
        f"{task.prompt()}\n\nA previous attempt failed these checks:\n{visible.feedback(label='visible')}"
        "\n\nWrite a new solution from scratch that passes them."
    )
    reply = chat(
        [{"role": "system", "content": GENERATOR_PROMPT}, {"role": "user", "content": message}],
        role="generator",
        **sampling("generator"),
    )
    return extract_code(reply.text, task.entry_point).code


NOTHING_FIXED = {
    "flatten": "def flatten(nested):\n    return []\n",
    "word_count": None,
    "running_average": "def running_average(numbers):\n    return []\n",
    "caesar": None,
    "parse_duration": "def parse_duration(text):\n    return 0\n",
}


def ledger(calls: int) -> Ledger:
    return Ledger([CallRecord("generator", 100, 50, 1.0, "local", "m") for _ in range(calls)])


def test_the_old_prompt_builder_is_failed_for_its_false_failure_message():
    passed, message, _ = ex.fresh.evaluate(old_fresh_attempt, NOTHING_FIXED, [], ledger(3), 0)
    assert (
        not passed
        and "every visible check passed" in message
        and "All 2 visible checks passed." in message
    )


def test_a_right_fresh_attempt_that_fixed_nothing_passes():
    passed, message, _ = ex.fresh.evaluate(right_fresh_attempt, NOTHING_FIXED, [], ledger(3), 0)
    assert passed, message
    assert "3 of 5" in message and "none" in message


def test_attempts_without_calls_and_unjudged_fixes_are_failed():
    assert not ex.fresh.evaluate(right_fresh_attempt, NOTHING_FIXED, [], ledger(0), 0)[
        0
    ]  # no new call
    assert not ex.fresh.evaluate(right_fresh_attempt, NOTHING_FIXED, ["flatten"], ledger(3), 0)[
        0
    ]  # not judged
    with_code = {**NOTHING_FIXED, "caesar": "def caesar(text, shift):\n    return text\n"}
    assert not ex.fresh.evaluate(right_fresh_attempt, with_code, [], ledger(4), 0)[
        0
    ]  # a call with nothing to report


def test_a_tie_may_round_either_way():
    def half_up(scores, weights):
        used = {k: w for k, w in weights.items() if k in scores}
        if not used:
            raise ValueError("no weight")
        mean = sum(scores[k] * w for k, w in used.items()) / sum(used.values())
        return float(Decimal(str(mean)).quantize(Decimal("0.1"), ROUND_HALF_UP))

    def half_even(scores, weights):
        used = {k: w for k, w in weights.items() if k in scores}
        if not used:
            raise ValueError("no weight")
        return round(sum(scores[k] * w for k, w in used.items()) / sum(used.values()), 1)

    assert ex.weighted.evaluate(half_up)[0] and ex.weighted.evaluate(half_even)[0]
    assert not ex.weighted.evaluate(lambda s, w: 5.25)[0]


def test_truncating_instead_of_rounding_is_failed_and_named():
    import math

    def floor(scores, weights):
        used = {k: w for k, w in weights.items() if k in scores}
        if not used:
            raise ValueError("no weight")
        return (
            math.floor(10 * sum(scores[k] * w for k, w in used.items()) / sum(used.values())) / 10
        )

    passed, message, hint = ex.weighted.evaluate(floor)
    assert not passed and hint and "returned 7.6; expected 7.7" in message and "cut off" in message


def stop_reason_with(converged):
    """A stop_reason right in every rule but convergence, which `converged(scores, patience)` decides."""

    def lines(code):
        return [line.rstrip() for line in code.strip().splitlines() if line.strip()]

    def stop_reason(history, threshold=8, max_iterations=3, patience=2):
        scores = [d.score for d in history if d.score is not None]
        last = history[-1]
        if last.score is not None and last.score >= threshold:
            return "accepted"
        if last.score is not None and last.score < 0.8 * max(scores):
            reason = "regressed"
        elif lines(last.code) and any(lines(d.code) == lines(last.code) for d in history[:-1]):
            reason = "oscillating"
        elif converged([d.score for d in history], patience):
            reason = "converged"
        elif len(history) >= max_iterations:
            reason = "max_iterations"
        else:
            return None
        return reason if scores else "invalid_critic"

    return stop_reason


def right_converged(scores, patience):
    before = [s for s in scores[:-patience] if s is not None]
    return (
        len(scores) > patience
        and bool(before)
        and all(s is None or s <= max(before) for s in scores[-patience:])
    )


def test_the_controller_check_passes_a_right_rule_and_fails_wrong_convergence():
    def two_rounds(scores, patience):  # ignores patience
        return right_converged(scores, 2)

    def last_only(scores, patience):  # compares only the last score with the best before the window
        before = [s for s in scores[:-patience] if s is not None]
        return (
            len(scores) > patience
            and bool(before)
            and (scores[-1] is None or scores[-1] <= max(before))
        )

    def unusable_dropped(scores, patience):  # unusable rounds dropped first: no longer rounds
        return right_converged([s for s in scores if s is not None], patience)

    assert ex.stop_rule.evaluate(stop_reason_with(right_converged))[0]
    for wrong in (two_rounds, last_only, unusable_dropped):
        passed, message, _ = ex.stop_rule.evaluate(stop_reason_with(wrong))
        assert not passed and "the controller says" in message, wrong.__name__


def test_a_call_in_the_wrong_role_gets_the_message_written_for_it():
    passed, message, _ = ex.fresh.evaluate(
        fresh_attempt_as("refiner"), NOTHING_FIXED, [], ledger(3), 0
    )
    assert not passed and "role='refiner'" in message and "raised" not in message


def test_a_wrong_fixed_list_is_explained_without_a_hint():
    passed, message, hint = ex.fresh.evaluate(
        right_fresh_attempt, NOTHING_FIXED, ["flatten"], ledger(3), 0
    )
    assert not passed and not hint and "[]" in message
