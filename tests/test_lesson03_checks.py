"""Lesson 03's exercise checks on their own, without the notebook: the fresh-attempt check fails the prompt
builder that said "failed these checks" over a pass, and passes a right answer that fixed nothing; the
weighted total accepts both roundings of a tie and fails a truncation; the convergence check follows StopRule
on unusable rounds, on `patience` and on every recent score; a call in the wrong role reaches its own message."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from course_checks import lesson03 as ex
from reflect.model.accounting import CallRecord, Ledger
from reflect.model.sampling import sampling
from reflect.tasks.extract import extract_code
from reflect.tasks.prompts import GENERATOR_PROMPT


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


def test_an_unusable_round_counts_as_a_round_as_in_stop_rule():
    assert ex.stop_rule_converged([8, 6, None], 2) is True
    assert ex.stop_rule_converged([5, None, None], 2) is True
    assert ex.stop_rule_converged([None, 5, 6], 2) is False


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


def test_convergence_needs_patience_and_every_recent_score():
    def two_rounds(scores, patience=2):  # ignores patience
        known = [s for s in scores[:-2] if s is not None]
        return (
            len(scores) > 2
            and bool(known)
            and all(s <= max(known) for s in scores[-2:] if s is not None)
        )

    def last_only(scores, patience=2):  # compares only the last score with the best before it
        before = [s for s in scores[:-1] if s is not None]
        return (
            len(scores) > patience
            and bool(before)
            and (scores[-1] is None or scores[-1] <= max(before))
        )

    assert (
        ex.stop_rule_converged([5, 7, 6], 1) is True
        and ex.stop_rule_converged([6, 8, 5], 2) is False
    )
    assert (
        "converged([5, 7, 6], patience=1) returned False" in ex.convergence.evaluate(two_rounds)[1]
    )
    assert "converged([6, 8, 5], patience=2) returned True" in ex.convergence.evaluate(last_only)[1]


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
