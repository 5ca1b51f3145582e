"""Lesson 03b's tables as text: critics beside accept-all, every critic's score per draft, each evaluator's loops,
what each score says, and a threshold table (the numbers are `reflect.judging.calibration`'s)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reflect.judging.calibration import loop_summary
from reflect.judging.controller import Draft
from reflect.judging.critics import Evaluation


def format_agreement(rows: Mapping[str, Mapping[str, float]]) -> str:
    """`agreement_rows` as a table: one line per critic."""
    heads = list(next(iter(rows.values())))
    lines = [f"{'':<11}" + "".join(f"{h:>13}" for h in heads)]
    for name, row in rows.items():
        lines.append(
            f"{name:<11}"
            + "".join(f"{v:>13.0%}" if h == "agree" else f"{v!s:>13}" for h, v in row.items())
        )
    return "\n".join(lines)


def score_grid(verdicts: Mapping[str, Mapping[str, Evaluation]], truth: Mapping[str, bool]) -> str:
    """Each task's hidden verdict and every critic's score, with the voting critic's spread where it has one."""
    names = list(verdicts)
    lines = [f"{'task':<16}{'hidden':>7}" + "".join(f"{n:>10}" for n in names) + "   voting spread"]
    for k in truth:
        marks = "".join(f"{verdicts[n][k].score!s:>10}" for n in names)
        spread = verdicts.get("voting", {}).get(k)
        spread = (spread.detail.get("spread") or 0.0) if spread else 0.0
        lines.append(f"{k:<16}{'pass' if truth[k] else 'FAIL':>7}{marks}   {spread:.2f}")
    voting = verdicts.get("voting")
    if voting:
        zero = [k for k in truth if not voting[k].detail.get("spread")]
        lowest = min(min(voting[k].detail.get("scores") or [10]) for k in truth)
        lines.append(
            f"voting spread 0 on {len(zero)} of {len(truth)} drafts; lowest single vote on any draft: {lowest}"
        )
    return "\n".join(lines)


def format_loops(
    loops: Mapping[str, Mapping[str, Sequence[Draft]]], one_shot: Mapping[str, bool]
) -> str:
    """`loop_summary` of each evaluator's loops, under the one-shot line (`one_shot`: task id -> first draft passed)."""
    lines = [f"{'':<8}{'passed':>9}{'iterations':>12}{'tokens':>10}{'replaced':>10}"]
    lines.append(
        f"{'one-shot':<8}{sum(one_shot.values()):>6}/{len(one_shot)}{1:>12.2f}{'-':>10}{'-':>10}"
    )
    for name, histories in loops.items():
        s = loop_summary(histories)
        lines.append(
            f"{name:<8}{s['passed']:>6}/{len(histories)}{s['iterations']:>12.2f}{s['tokens']:>10}{s['replaced']:>10}"
        )
    return "\n".join(lines)


def format_calibration(groups: Mapping[float, Sequence[bool]], band: Sequence[float]) -> str:
    """What each score says (`groups`: score -> hidden verdicts of its drafts, as lesson 03b's `outcomes_by_score`),
    beside the base rate over them all; the scores in `band` marked as saying little."""
    scored = [ok for oks in groups.values() for ok in oks]
    lines = [
        f"base rate: {sum(scored) / max(len(scored), 1):.0%} of the {len(scored)} scored drafts pass"
    ]
    for score, oks in sorted(groups.items()):
        mark = " <- says little" if score in band else ""
        lines.append(
            f"score {score:>4}: {len(oks):>2} drafts, {sum(oks):>2} pass ({sum(oks) / len(oks):.0%}){mark}"
        )
    return "\n".join(lines)


def format_sweep(rows: Sequence[Mapping[str, float]]) -> str:
    """A threshold table (rows as `sweep` gives them), and a line saying so when every threshold gives the same loops."""
    lines = [f"{'threshold':>9}{'iterations':>12}{'pass rate':>11}{'tokens/task':>13}"]
    for row in rows:
        lines.append(
            f"{row['threshold']:>9}{row['avg_iterations']:>12.2f}{row['pass_rate']:>11.0%}{row['avg_tokens']:>13.0f}"
        )
    if len(rows) > 1 and len({(r["avg_iterations"], r["pass_rate"]) for r in rows}) == 1:
        lines.append("Flat: every threshold gives the same loops.")
    return "\n".join(lines)
