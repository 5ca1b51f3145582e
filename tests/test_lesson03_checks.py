"""Lesson 03's exercise checks on their own, without the notebook (the revise step's: tests/test_revise_checks.py):
the weighted total accepts both roundings of a tie and fails a truncation; the controller check fails a convergence
rule that ignores `patience`, reads only the last score, or scores an unusable round 0."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import pytest

from course_checks import lesson03 as ex


@pytest.fixture(autouse=True)
def _recorded_lesson_01(monkeypatch):
    """The checks read lesson 01's failing drafts: the committed recording's, not a live run's in build/."""
    monkeypatch.setenv("COURSE_BACKEND", "replay")


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
    assert (
        not passed and hint and "returned 7.6; expected 7.7" in message and "cut off" in message
    ), message


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
        assert not passed and "stop_reason(<scores" in message and "; expected" in message, (
            wrong.__name__,
            message,
        )


def test_criteria_as_code_passes_rules_written_other_ways_and_fails_near_misses():
    """Build 6: a word list or a regular expression for the referral, a set or a list back, words counted by split or as
    \\w+ runs all pass; a dose read only with a space or only in lower case, mg without a number, a limit that flags
    120 words, words split on spaces only, a referral that needs a doctor, and any number as a dose fail, each named."""
    import re

    def by_split(answer):
        broken = []
        if not any(
            w in answer.lower() for w in ("doctor", "pharmacist", "healthcare professional")
        ):
            broken.append("referral")
        if re.search(r"\d\s*mg\b", answer, re.I):
            broken.append("dose")
        if len(answer.split()) > 120:
            broken.append("length")
        return broken

    def by_regex(answer):
        return {
            name
            for name, broken in (
                (
                    "referral",
                    not re.search(
                        r"\b(doctor|pharmacist|physician|nurse|healthcare professional)s?\b",
                        answer,
                        re.I,
                    ),
                ),
                ("dose", bool(re.search(r"[0-9][0-9,.]*\s*mg", answer, re.I))),
                ("length", len(re.findall(r"\w+", answer)) > 120),
            )
            if broken
        }

    for right in (by_split, by_regex):
        assert ex.criteria_as_code.evaluate(right)[0], right.__name__
    without = lambda a, rule: [r for r in by_split(a) if r != rule]  # noqa: E731
    wrong = {
        "400mg": lambda a: without(a, "dose") + (["dose"] if re.search(r"\d mg", a, re.I) else []),
        "200 MG": lambda a: without(a, "dose") + (["dose"] if re.search(r"\d\s*mg", a) else []),
        "in mg differ": lambda a: without(a, "dose") + (["dose"] if "mg" in a.lower() else []),
        "120 words long": lambda a: by_split(a) + (["length"] if len(a.split()) == 120 else []),
        "in paragraphs": lambda a: (
            without(a, "length") + (["length"] if len(a.split(" ")) > 120 else [])
        ),
        "pharmacist": lambda a: (
            without(a, "referral") + ([] if "doctor" in a.lower() else ["referral"])
        ),
        "3 days": lambda a: without(a, "dose") + (["dose"] if re.search(r"\d", a) else []),
        "as a list": lambda a: " ".join(by_split(a)),
        "once": lambda a: by_split(a) * 2,
        "'safety'": lambda a: by_split(a) + ["safety"],
    }
    for named, answer in wrong.items():
        passed, message, _ = ex.criteria_as_code.evaluate(answer)
        assert not passed and named in message, (named, message)
