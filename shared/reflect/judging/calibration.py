"""Calibrating a scored critic from recorded histories: no new model calls.

- `agreement`: how a critic's accept/reject (score >= threshold) lines up with the hidden tests.
- `replay_rule`: what a loop would have returned under another stop rule, by cutting its
  recorded drafts (`StopRule.drafts(run.steps)`) where that rule stops (drafts after the cut were
  never needed).
- `sweep`: `replay_rule` over many histories and thresholds: average iterations, final pass
  rate, tokens, for the threshold table and plot.
- `uninformative_band`: the scores whose share of passing drafts is close to the base rate
  (`base_rate`), where the score adds little to knowing nothing.
Each draft must carry its hidden-test verdict in `draft.passed`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..records import Stop
from .controller import Draft, StopRule


@dataclass(frozen=True)
class _Agreement:
    """How often a critic's verdict matched the hidden tests, with the confusion counts."""

    true_accepts: int
    false_accepts: int  # the critic accepts, the hidden tests fail
    true_rejects: int
    false_rejects: int  # the critic rejects, the hidden tests pass
    unscored: int

    @property
    def rate(self) -> float:
        """The share of drafts on which critic and hidden tests agree."""
        judged = self.true_accepts + self.false_accepts + self.true_rejects + self.false_rejects
        return (self.true_accepts + self.true_rejects) / judged if judged else 0.0


def agreement(pairs: list[tuple[float | None, bool]], threshold: float) -> _Agreement:
    """`pairs` are (critic score, hidden tests passed) for the same drafts."""
    ta = fa = tr = fr = un = 0
    for score, passed in pairs:
        if score is None:
            un += 1
        elif score >= threshold:
            ta, fa = (ta + 1, fa) if passed else (ta, fa + 1)
        else:
            fr, tr = (fr + 1, tr) if passed else (fr, tr + 1)
    return _Agreement(ta, fa, tr, fr, un)


def replay_rule(history: Sequence[Draft], rule: StopRule) -> tuple[list[Draft], Stop | None]:
    """The prefix of a recorded history that `rule` would have produced, and its stop reason.

    A history that ends before the rule would stop (the recording used a laxer rule) is
    returned whole with reason None."""
    for k in range(1, len(history) + 1):
        reason = rule.decide_drafts(history[:k])
        if reason:
            return list(history[:k]), reason
    return list(history), None


def sweep(
    histories: Sequence[Sequence[Draft]], thresholds: list[float], max_iterations: int = 3
) -> list[dict]:
    """One row per threshold: avg iterations, final pass rate (best-so-far attempt), avg tokens."""
    rows = []
    for t in thresholds:
        rule = StopRule(threshold=t, max_iterations=max_iterations)
        cut = [replay_rule(h, rule) for h in histories if h]
        n = len(cut) or 1
        rows.append(
            {
                "threshold": t,
                "avg_iterations": sum(len(c) for c, _ in cut) / n,
                "pass_rate": sum(bool(rule.choose(c, stop).passed) for c, stop in cut) / n,
                "avg_tokens": sum(sum(a.tokens for a in c) for c, _ in cut) / n,
            }
        )
    return rows


def base_rate(pairs: list[tuple[float | None, bool]]) -> float:
    """The share of scored drafts that pass the hidden tests (0 for none): what you know with no score at all."""
    scored = [passed for score, passed in pairs if score is not None]
    return sum(scored) / len(scored) if scored else 0.0


def uninformative_band(
    pairs: list[tuple[float | None, bool]], margin: float = 0.2, base: float | None = None
) -> list[float]:
    """Scores at which the share of passing drafts is within `margin` of the base rate (by default
    `base_rate(pairs)`): there knowing the score tells you little more than knowing nothing.

    A fixed band (say 30% to 70% passing) ignores the base rate: where 72% of all drafts pass, a
    score at which 72% pass says nothing, yet it lies outside that band. With a base rate of 50%
    and the default margin, this is that band."""
    by_score: dict[float, list[bool]] = {}
    for score, passed in pairs:
        if score is not None:
            by_score.setdefault(score, []).append(passed)
    rate = base_rate(pairs) if base is None else base
    return sorted(s for s, v in by_score.items() if abs(sum(v) / len(v) - rate) <= margin + 1e-12)
