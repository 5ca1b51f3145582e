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


def d_of(table, a, b):
    """Per problem, the share of a's replicates passing minus b's (one size's d: the wrong answers' part)."""
    passed: dict = {}
    for row in table:
        if row["strategy"] in (a, b):
            passed.setdefault((row["strategy"], row["task_id"]), []).append(
                bool(row["run"]["passed"])
            )
    share = {k: sum(v) / len(v) for k, v in passed.items()}
    return {t: share[a, t] - share[b, t] for s, t in share if s == a and (b, t) in share}


def stand_in_small(large):
    """A made-up second size from the 1.5B's rows: problems in reverse order, one left out, and blind's
    verdicts flipped on every fifth problem, so that e is not 0 everywhere."""
    out = []
    for row in reversed(copy.deepcopy(large)):
        n = int(row["task_id"].split("/")[1])
        if n == 7:
            continue
        if row["strategy"] == fx.BLIND and n % 5 == 0:
            row["run"]["passed"] = not row["run"]["passed"]
        out.append(row)
    return out


size_gap = solved("06.9")["size_gap"]  # Build 9's answer, as the lesson writes it


def as_pairs(small, large, a, b):
    return sorted(size_gap(small, large, a, b).items())


def as_fractions(small, large, a, b):
    from fractions import Fraction

    return {t: Fraction(e).limit_denominator(60) for t, e in size_gap(small, large, a, b).items()}


def as_float32(small, large, a, b):
    import numpy as np

    return {t: np.float32(e) for t, e in size_gap(small, large, a, b).items()}


def by_loops(small, large, a, b):
    from collections import defaultdict

    def d(table):
        hits, runs = defaultdict(int), defaultdict(int)
        for row in table:
            hits[row["strategy"], row["task_id"]] += row["run"]["passed"]
            runs[row["strategy"], row["task_id"]] += 1
        return {t: hits[a, t] / runs[a, t] - hits[b, t] / runs[b, t] for s, t in runs if s == a}

    out, dl = {}, d(large)
    for t, x in d(small).items():
        if t in dl:
            out[t] = x - dl[t]
    return out


@pytest.mark.parametrize("right", [size_gap, as_pairs, as_fractions, as_float32, by_loops])
def test_size_gap_passes_right_answers_written_several_ways(large, right):
    ok, message, _ = lesson06.size_gap.evaluate(right, stand_in_small(large), large)
    assert ok, message


def reversed_sizes(small, large, a, b):
    return {t: -e for t, e in size_gap(small, large, a, b).items()}


def swapped_arms(small, large, a, b):
    return size_gap(small, large, b, a)


def by_position(small, large, a, b):
    ds, dl = d_of(small, a, b), d_of(large, a, b)
    return {t: x - y for (t, x), y in zip(ds.items(), dl.values(), strict=False)}


def counts(small, large, a, b):
    def c(table):
        out: dict = {}
        for row in table:
            if row["strategy"] in (a, b):
                sign = 1 if row["strategy"] == a else -1
                out[row["task_id"]] = out.get(row["task_id"], 0) + sign * row["run"]["passed"]
        return out

    cs, cl = c(small), c(large)
    return {t: cs[t] - cl[t] for t in cs if t in cl}


def missing_as_zero(small, large, a, b):
    ds, dl = d_of(small, a, b), d_of(large, a, b)
    return {t: ds.get(t, 0) - dl.get(t, 0) for t in ds.keys() | dl.keys()}


def rounded(small, large, a, b):
    return {t: round(e, 3) for t, e in size_gap(small, large, a, b).items()}


def others_as_b(small, large, a, b):
    def d(table):
        s = {(r["strategy"] == a, r["task_id"]): [] for r in table}
        for r in table:
            s[r["strategy"] == a, r["task_id"]].append(r["run"]["passed"])
        return {
            t: sum(v) / len(v) - sum(s[False, t]) / len(s[False, t])
            for (isa, t), v in s.items()
            if isa
        }

    ds, dl = d(small), d(large)
    return {t: ds[t] - dl[t] for t in ds if t in dl}


def booleans(small, large, a, b):
    return {t: e > 0 for t, e in size_gap(small, large, a, b).items()}


def rewrites_the_rows(small, large, a, b):
    for row in [*small, *large]:
        row["run"]["passed"] = False
    return size_gap(small, large, a, b)


def fixed_replicates(small, large, a, b):
    """Shares over the fair test's replicate counts, 3 at the small size and 2 at the large, typed in."""

    def d(table, n):
        hits: dict = {}
        for row in table:
            if row["strategy"] in (a, b):
                hits[row["strategy"], row["task_id"]] = (
                    hits.get((row["strategy"], row["task_id"]), 0) + row["run"]["passed"]
                )
        return {t: hits[a, t] / n - hits[b, t] / n for s, t in hits if s == a and (b, t) in hits}

    ds, dl = d(small, 3), d(large, 2)
    return {t: ds[t] - dl[t] for t in ds if t in dl}


def drops_zeros(small, large, a, b):
    return {t: e for t, e in size_gap(small, large, a, b).items() if e}


def percentages(small, large, a, b):
    return {t: 100 * e for t, e in size_gap(small, large, a, b).items()}


def absolute(small, large, a, b):
    return {t: abs(e) for t, e in size_gap(small, large, a, b).items()}


def calls_the_package(small, large, a, b):
    return fx.size_gap(small, large, a, b)


WRONG = {
    reversed_sizes: "That is -e",
    swapped_arms: "That is -e",
    by_position: "by position",
    counts: "pass counts",
    missing_as_zero: "Only the problems both recordings have",
    rounded: "rounded",
    others_as_b: "only those two arms' rows",
    booleans: "each e a number",
    rewrites_the_rows: "",
    fixed_replicates: "the other way round",
    drops_zeros: "whose e is 0 are missing",
    percentages: "percentages",
    absolute: "",
    calls_the_package: "called the course's analysis",
}


@pytest.mark.parametrize("wrong", list(WRONG), ids=lambda f: f.__name__)
def test_size_gap_fails_wrong_answers_and_says_why(large, wrong):
    small = stand_in_small(large)
    kept = copy.deepcopy((small, large, lesson06.SMALL_TOY, lesson06.LARGE_TOY))
    ok, message, _ = lesson06.size_gap.evaluate(wrong, small, large)
    assert not ok and WRONG[wrong] in message, message
    assert (small, large, lesson06.SMALL_TOY, lesson06.LARGE_TOY) == kept


def test_the_fresh_reads_wrong_answers_of_lesson_06_fail(large):
    """Wrong answers a fresh learner read passed, each now caught: differ comparing by identity (equal values built
    apart differ), compare_arms turning the rows' verdicts into numbers (True == 1.0 hid it), and size_gap sorting
    the rows it is given."""
    ns = solved("06.6")
    configs = (dict(lesson06.TOY_CONFIGS), dict(lesson06.NOT_ADJACENT))
    assert lesson06.factors.evaluate(ns["differ"], ns["isolating"], *configs)[0]
    identity = {"differ": lambda a, b: {k for k in a if a[k] is not b[k]}}
    ok, message, *_ = lesson06.factors.evaluate(identity["differ"], ns["isolating"], *configs)
    assert not ok and "equal values built apart" in message, message

    def floats_then_compares(table, a, b):
        for row in table:
            row["run"]["passed"] = float(bool(row["run"]["passed"]))
        return compare_arms(table, a, b)

    ok, message, *_ = lesson06.primary.evaluate(floats_then_compares, large)
    assert not ok and "changed the arguments" in message, message

    def sorting(small, large_rows, a, b):
        small.sort(key=lambda r: r["task_id"])
        large_rows.sort(key=lambda r: r["task_id"])
        return by_loops(small, large_rows, a, b)

    ok, message, *_ = lesson06.size_gap.evaluate(sorting, stand_in_small(large), large)
    assert not ok and "changed the arguments it was given" in message, message


def test_the_second_fresh_reads_answers_of_lesson_06(large):
    """From a second fresh read: a differ built on the symmetric difference of the items passes (the equal values
    built apart are strings now, as factors(...) makes them); isolating that accepts two identical arms fails;
    compare_arms whose mean pools the rows fails once an arm misses a replicate on one problem."""
    from itertools import combinations

    ns = solved("06.6")
    configs = (dict(lesson06.TOY_CONFIGS), dict(lesson06.NOT_ADJACENT))
    symdiff = {"differ": lambda a, b: {k for k, _ in set(a.items()) ^ set(b.items())}}
    assert lesson06.factors.evaluate(symdiff["differ"], ns["isolating"], *configs)[0]

    def subset(configs, factor):
        pairs = combinations(configs, 2)
        return next(
            ((x, y) for x, y in pairs if ns["differ"](configs[x], configs[y]) <= {factor}), None
        )

    assert not lesson06.factors.evaluate(ns["differ"], subset, *configs)[0]

    def pooled(table, a, b):
        mean, better, worse, p = compare_arms(table, a, b)
        both = {r["task_id"] for r in table if r["strategy"] == a} & {
            r["task_id"] for r in table if r["strategy"] == b
        }

        def rate(s):
            return [
                r["run"]["passed"] for r in table if r["strategy"] == s and r["task_id"] in both
            ]

        return sum(rate(a)) / len(rate(a)) - sum(rate(b)) / len(rate(b)), better, worse, p

    assert lesson06.primary.evaluate(compare_arms, large)[0]
    assert not lesson06.primary.evaluate(pooled, large)[0]


def test_a_sign_flip_on_rounded_differences_fails_and_is_named():
    """06.3 (a fifth fresh read's): rounding the differences to 2 places before flipping their signs breaks a tie of
    thirds; the check says so."""
    import itertools

    from course_checks import lesson06

    def rounded(diffs):
        nonzero = [round(d, 2) for d in diffs if d != 0]
        if not nonzero:
            return 1.0
        observed = abs(sum(nonzero))
        hits = sum(
            abs(sum(s * d for s, d in zip(signs, nonzero, strict=True))) >= observed - 1e-9
            for signs in itertools.product((1, -1), repeat=len(nonzero))
        )
        return hits / 2 ** len(nonzero)

    problem = lesson06.SIGN_FLIP.problem(rounded)
    assert problem and "a third is not 0.33" in problem, problem


def test_the_eighth_fresh_reads_wrong_answers_of_lesson_06_fail():
    """06.1: code extracted without the entry point (a reply with two versions joins them); 06.4: a sample whose
    hidden verdict is None counted as passing; 06.7's refusal names the sign-flip p too."""
    import dataclasses

    from course_checks import lesson06 as ex

    def loose(chat, task, evidence, k):
        module = ex.resample_module
        real = module.extract_code
        module.extract_code = lambda text, entry_point=None: real(text)
        try:
            return ex._resample_key(chat, task, evidence, k)
        finally:
            module.extract_code = real

    problem = dataclasses.replace(ex.RESAMPLE, forbid=None).problem(loose)
    assert problem and "two versions" in problem, problem
    problem = ex.CURVE.problem(
        lambda r: [(j, p, t) for j, p, t in ex._curve_truth([(w, [(a, b, c is not False) for a, b, c in s]) for w, s in r])]
    )  # fmt: skip
    assert problem is not None
    assert "sign-flip p" in ex.PRIMARY.forbid[2]
