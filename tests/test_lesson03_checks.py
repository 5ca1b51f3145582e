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


def stop_reason_with(converged, regressed=lambda last, best, threshold: last < 0.8 * best):
    """A stop_reason right in every rule but convergence, which `converged(scores, patience)` decides (and a drop,
    `regressed(last, best, threshold)`)."""

    def lines(code):
        return [line.rstrip() for line in code.strip().splitlines() if line.strip()]

    def stop_reason(history, threshold=8, max_iterations=3, patience=2):
        scores = [d.score for d in history if d.score is not None]
        last = history[-1]
        if last.score is not None and last.score >= threshold:
            return "accepted"
        if last.score is not None and regressed(last.score, max(scores), threshold):
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


def test_the_second_fresh_reads_wrong_answers_of_lesson_03_fail():
    """Each passed before its case was added: strengths never read, or its items never read; an empty suggestion
    rejected; no convergence when the last rounds have no score; a drop measured against the threshold; the best
    among all but the last draft; a referral that must end at the word ("doctors" then names none)."""
    import json
    import re

    def read_score(reply, strengths=True, items=True, empty_ok=True, strengths_a_list=True):
        try:
            v = json.loads(reply)
        except ValueError:
            a, b = reply.find("{"), reply.rfind("}")
            try:
                v = json.loads(reply[a : b + 1]) if a != -1 < b else None
            except ValueError:
                return None
        fields = {"score", "issues", "strengths", "suggestion"}
        if not isinstance(v, dict) or not fields <= set(v):
            return None
        lists = ["issues"] + (["strengths"] if strengths else [])
        ok = (
            type(v["score"]) is int
            and 1 <= v["score"] <= 10
            and all(isinstance(v[k], list) for k in lists[: 1 + strengths_a_list])
            and all(isinstance(x, str) for k in lists[: 1 + items] for x in v[k])
            and isinstance(v["suggestion"], str)
            and (empty_ok or v["suggestion"] != "")
        )
        return v["score"] if ok else None

    assert ex.READ.problem(read_score) is None
    for wrong in (
        lambda r: read_score(r, strengths=False),
        lambda r: read_score(r, items=False),
        lambda r: read_score(r, empty_ok=False),
        lambda r: read_score(r, strengths_a_list=False),  # "good" is a string of strings
    ):
        assert ex.READ.problem(wrong) is not None

    def no_recent_score(scores, patience):
        return right_converged(scores, patience) and any(s is not None for s in scores[-patience:])

    passed, message, _ = ex.stop_rule.evaluate(stop_reason_with(no_recent_score))
    assert not passed and "<scores [5, None, None]>" in message, message

    against_threshold = stop_reason_with(
        right_converged, regressed=lambda last, best, threshold: last < best - 0.2 * threshold
    )
    passed, message, _ = ex.stop_rule.evaluate(against_threshold)
    assert not passed and "regressed" in message, message

    def best_before_last(history):
        pool = [d for d in history[:-1] if d.score is not None] or [
            d for d in history if d.score is not None
        ]
        return (
            max(pool, key=lambda d: (d.score, -d.iteration))
            if pool
            else (history[-1] if history else None)
        )

    assert "<scores [5, 7]>" in ex.BEST.problem(best_before_last)

    def word_bounded(answer):
        named = re.search(r"\b(doctor|pharmacist|healthcare professional)\b", answer, re.I)
        broken = [] if named else ["referral"]
        broken += ["dose"] if re.search(r"\d\s*mg\b", answer, re.I) else []
        return broken + (["length"] if len(answer.split()) > 120 else [])

    passed, message, _ = ex.criteria_as_code.evaluate(word_bounded)
    assert not passed and "Doctors and pharmacists" in message, message


def test_the_made_up_histories_reach_every_stop_and_never_swing():
    """03.2's seeded histories: every reason the statement names comes out of them, under every threshold and
    patience drawn, and none ends in the four-score swing the statement leaves out."""
    from collections import Counter

    from reflect.judging.controller import _swings

    made_up = [c for c in ex.STOP.cases if c.note == "a made-up history"]
    reasons = Counter(
        w for c, w in zip(ex.STOP.cases, ex.STOP.wants(), strict=True) if c in made_up
    )
    assert len(made_up) == 120 and set(reasons) >= {
        None,
        "accepted",
        "regressed",
        "oscillating",
        "converged",
        "max_iterations",
        "invalid_critic",
    }, reasons
    assert {c.kwargs["patience"] for c in made_up} == {1, 2, 3}
    for c in made_up:
        known = [d.score for d in c.args[0] if d.score is not None]
        assert not (len(known) >= 4 and _swings(known[-4:]))


def test_a_fourth_fresh_reads_wrong_answers_of_lesson_03_fail():
    """A best_attempt that skips falsy scores (a score of 0 too), and a loop that extracts code without the task's
    entry point (a reply with a second version of the function gives both, joined)."""
    falsy = ex.BEST.problem(
        lambda h: max(
            (d for d in h if d.score), key=lambda d: d.score, default=h[-1] if h else None
        )
    )
    assert falsy and "<scores [0, None]>" in falsy, falsy
    from reflect.tasks.extract import extract_code

    def loose(chat, task, critic, revise=None, threshold=8, max_iterations=3):
        from reflect.strategies import scored

        real = scored.extract_code
        scored.extract_code = lambda text, entry_point=None: real(text)
        try:
            return ex._scored_key(
                chat, task, critic, threshold=threshold, max_iterations=max_iterations
            )
        finally:
            scored.extract_code = real

    import dataclasses

    problem = dataclasses.replace(ex.LOOP, forbid=None).problem(loose)
    assert problem and "a second version" in problem, problem
    assert extract_code(ex.D1 + "\n\nOr:\n" + ex.D3, "flatten").code.count("def flatten") == 1


def test_the_seventh_fresh_reads_wrong_answers_of_lesson_03_fail_and_are_told():
    """03.1: a reply that is JSON as a whole, a list, is no verdict, though a dict lies inside its braces; 03.6: a
    revise step making two calls a draft is told so, not shown a scripted chat running dry."""
    import json

    def braces_only(reply):
        text = reply or ""
        start, end = text.find("{"), text.rfind("}")
        try:
            data = json.loads(text[start : end + 1])
        except ValueError:
            return None
        return ex._truth_score(json.dumps(data)) if isinstance(data, dict) else None

    import dataclasses

    problem = dataclasses.replace(ex.READ, forbid=None).problem(braces_only)
    assert problem and "[{" in problem, problem
    from reflect.strategies.revise import fresh

    def twice(chat, task, code, feedback, n):
        fresh(chat, task, code, feedback, n)
        return fresh(chat, task, code, feedback, n)

    problem = dataclasses.replace(ex.FRESH, forbid=None).problem(
        lambda task_id, *drafts: ex._fresh_run(twice, task_id, *drafts)
    )
    assert problem and "made 2 calls" in problem, problem
