"""Lesson 06's checks on their own, without the notebook: a right answer passes, and an answer that changes
the rows it is given can neither pass nor spoil the learner's table."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from course_checks import lesson06
from reflect.evaluation import feedback as fx

RESULTS = Path(__file__).resolve().parents[1] / "results"


@pytest.fixture(scope="module")
def large():
    return fx.rows(RESULTS / "06_feedback_164.jsonl")[0]


def d_of(table, a, b):
    """Per problem, the share of a's replicates passing minus b's, for the problems both arms have."""
    passed: dict = {}
    for row in table:
        if row["strategy"] in (a, b):
            passed.setdefault((row["strategy"], row["task_id"]), []).append(
                bool(row["run"]["passed"])
            )
    share = {k: sum(v) / len(v) for k, v in passed.items()}
    return {t: share[a, t] - share[b, t] for s, t in share if s == a and (b, t) in share}


def sign_flip_p(diffs):
    ways = {0: 1}
    units = [round(abs(x) * 60) for x in diffs if x]
    for v in units:
        nxt: dict = {}
        for s, n in ways.items():
            nxt[s + v] = nxt.get(s + v, 0) + n
            nxt[s - v] = nxt.get(s - v, 0) + n
        ways = nxt
    observed = abs(round(sum(diffs) * 60))
    return sum(n for s, n in ways.items() if abs(s) >= observed) / 2 ** len(units)


def compare_arms(table, a, b):
    d = list(d_of(table, a, b).values())
    return sum(d) / len(d), sum(x > 0 for x in d), sum(x < 0 for x in d), sign_flip_p(d)


def test_compare_arms_passes_and_one_that_changes_the_table_neither_passes_nor_spoils_it(large):
    assert lesson06.primary.evaluate(compare_arms, large)[0]
    before = copy.deepcopy(large)

    def flips_then_compares(table, a, b):  # right on the made-up table, which it leaves alone
        for row in table:
            if row["task_id"].startswith("HumanEval/"):
                row["run"]["passed"] = (
                    row["strategy"] == a
                )  # a wins everywhere: so would the expectation
        return compare_arms(table, a, b)

    def loses_then_compares(table, a, b):
        for row in table:
            row["run"]["passed"] = row["strategy"] != a
        return compare_arms(table, a, b)

    toy = copy.deepcopy(lesson06.TOY_TABLE)
    assert not lesson06.primary.evaluate(flips_then_compares, large)[0]
    assert not lesson06.primary.evaluate(loses_then_compares, large)[0]
    assert large == before and lesson06.TOY_TABLE == toy
