"""Calibrating a scored critic from recorded histories: no new model calls.

- `agreement`: how a critic's accept/reject (score >= threshold) lines up with the hidden tests.
- `replay_rule`: what a loop would have returned under another stop rule, by cutting a
  recorded history where that rule stops (attempts after the cut were never needed).
- `sweep`: `replay_rule` over many histories and thresholds: average iterations, final pass
  rate, tokens, for the threshold table and plot.
Each attempt must carry its hidden-test verdict in `attempt.passed`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .controller import ScoredAttempt, StopRule, best_so_far


@dataclass(frozen=True)
class Agreement:
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


def agreement(pairs: list[tuple[float | None, bool]], threshold: float) -> Agreement:
    """`pairs` are (critic score, hidden tests passed) for the same drafts."""
    ta = fa = tr = fr = un = 0
    for score, passed in pairs:
        if score is None:
            un += 1
        elif score >= threshold:
            ta, fa = (ta + 1, fa) if passed else (ta, fa + 1)
        else:
            fr, tr = (fr + 1, tr) if passed else (fr, tr + 1)
    return Agreement(ta, fa, tr, fr, un)


def replay_rule(history: list[ScoredAttempt], rule: StopRule) -> tuple[list[ScoredAttempt], str]:
    """The prefix of a recorded history that `rule` would have produced, and its stop reason.

    A history that ends before the rule would stop (the recording used a laxer rule) is
    returned whole with reason "recording ended"."""
    for k in range(1, len(history) + 1):
        reason = rule.decide(history[:k])
        if reason:
            return history[:k], reason
    return list(history), "recording ended"


def sweep(histories: list[list[ScoredAttempt]], thresholds: list[float], max_iterations: int = 3) -> list[dict]:
    """One row per threshold: avg iterations, final pass rate (best-so-far attempt), avg tokens."""
    rows = []
    for t in thresholds:
        rule = StopRule(threshold=t, max_iterations=max_iterations)
        cut = [replay_rule(h, rule)[0] for h in histories if h]
        n = len(cut) or 1
        rows.append({
            "threshold": t,
            "avg_iterations": sum(len(c) for c in cut) / n,
            "pass_rate": sum(bool(best_so_far(c).passed) for c in cut) / n,
            "avg_tokens": sum(sum(a.tokens for a in c) for c in cut) / n,
        })
    return rows


def uninformative_band(pairs: list[tuple[float | None, bool]], low: float = 0.3, high: float = 0.7) -> list[float]:
    """Scores at which the share of passing drafts lies between `low` and `high`: there the score says little."""
    by_score: dict[float, list[bool]] = {}
    for score, passed in pairs:
        if score is not None:
            by_score.setdefault(score, []).append(passed)
    return sorted(s for s, v in by_score.items() if low <= sum(v) / len(v) <= high)
