"""Lesson 06's checks on their own, without the notebook: a right answer passes, and an answer that changes
the rows it is given can neither pass nor spoil the learner's table."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from course_checks import lesson06
from reflect.evaluation import feedback as fx

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"


@pytest.fixture(scope="module")
def large():
    return fx.rows(RESULTS / "06_feedback_164.jsonl")[0]


def solved(*keys: str) -> dict:
    """The solved lesson's cells for these exercises, run in one namespace."""
    path = ROOT / "solutions" / "06_does_reflection_pay.ipynb"
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    namespace: dict = {}
    exec("import itertools", namespace)  # noqa: S102 - the lesson's own import
    for key in keys:
        cell = next(c for c in cells if c["metadata"].get("reflect", {}).get("key") == key)
        exec("".join(cell["source"]), namespace)  # noqa: S102 - the course's own cells
    return namespace


def sign_flip_p(diffs):
    """Build 3's test counted by sums, not by listing the 2^n patterns as the lesson's answer does: as
    quick under the check's call watcher on the fair test's 17 differences."""
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


LESSON = solved("06.7")  # Build 7's answer, calling the sign_flip_p above
LESSON["sign_flip_p"] = sign_flip_p
compare_arms = LESSON["compare_arms"]


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
