"""When a scored reflection loop stops, and which attempt it returns.

`StopRule.decide(history)` looks at the attempts so far and says whether to stop and why:
the score reached the threshold; the iteration budget is spent; no improvement over the
best score in `patience` rounds (convergence); a draft came back to an earlier one or the
scores swing up and down (oscillation); or the score dropped more than `regression_drop`
(20%) below the best (regression, which also reverts to the best attempt).
`best_so_far(history)` returns the highest-scoring attempt, not the last.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from ..records import Step


@dataclass
class ScoredAttempt:
    """One attempt of a scored loop: the draft, its score and feedback, its tokens, and the steps a run
    records for it (the call that wrote the draft, the critique of it)."""

    iteration: int
    output: str
    score: float | None  # None: the critic's reply could not be used
    feedback: str
    tokens: int = 0
    steps: tuple[Step, ...] = ()
    accepted: bool | None = None  # the judge's own decision, where it makes one (Reflexion's); None: the threshold decides
    passed: bool | None = None  # the hidden tests' verdict, where a lesson judged the draft (for calibration)


@dataclass(frozen=True)
class StopRule:
    """When a scored loop stops: threshold, budget, convergence, oscillation, regression.

    An attempt whose judge decided acceptance itself (`ScoredAttempt.accepted`, Reflexion's evaluator
    and tests) is accepted or not by that decision, whatever its score. `oscillation_window=0` turns
    the oscillation rule off (Reflexion notes a repeated draft and goes on, since its next prompt differs)."""

    threshold: float = 8
    max_iterations: int = 3
    patience: int = 2
    regression_drop: float = 0.2
    oscillation_window: int = 4

    def accepts(self, score: float | None) -> bool | None:
        """Does this score reach the threshold? None for no score: an unusable critique accepts nothing
        and rejects nothing."""
        return None if score is None else score >= self.threshold

    def decide(self, history: list[ScoredAttempt]) -> str | None:
        """The reason to stop now, or None to go on."""
        if not history:
            return None
        last = history[-1]
        scores = [a.score for a in history if a.score is not None]
        if last.accepted if last.accepted is not None else self.accepts(last.score):
            return "threshold"
        if scores and last.score is not None and last.score < max(scores) * (1 - self.regression_drop):
            return "regression"
        if self.oscillation_window and _repeats_earlier_draft(history):
            return "oscillation"
        if self.oscillation_window and len(scores) >= self.oscillation_window and _swings(scores[-self.oscillation_window:]):
            return "oscillation"
        if len(history) > self.patience and scores:
            best_before = max((a.score for a in history[: -self.patience] if a.score is not None), default=None)
            recent = [a.score for a in history[-self.patience:] if a.score is not None]
            if best_before is not None and (not recent or max(recent) <= best_before):
                return "converged"
        if len(history) >= self.max_iterations:
            return "max_iterations"
        return None


def _normalise(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip().splitlines() if line.strip())


def _repeats_earlier_draft(history: list[ScoredAttempt]) -> bool:
    last = _normalise(history[-1].output)
    return bool(last) and any(_normalise(a.output) == last for a in history[:-1])


def _swings(scores: list[float]) -> bool:
    """Up, down, up (or down, up, down) over a spread (highest minus lowest) of at least one point.

    The spread, not the standard deviation: scores that stay above the regression bound
    (80% of the best) and below the threshold cannot reach a standard deviation of 1 on a
    1-10 scale, so a rule on it could never fire in a loop with the default settings.
    """
    deltas = [b - a for a, b in pairwise(scores)]
    alternating = all(d != 0 for d in deltas) and all((x > 0) != (y > 0) for x, y in pairwise(deltas))
    return alternating and max(scores) - min(scores) >= 1


def best_index(scores: Sequence[float | None]) -> int | None:
    """Where the best so far is: the highest score, the earliest among equals; an unscored entry
    only if nothing is scored (then the last). None for no entries. Every strategy that keeps its
    best draft (the scored loop, resampling, Reflexion) chooses with this."""
    if not scores:
        return None
    scored = [i for i, s in enumerate(scores) if s is not None]
    return max(scored, key=lambda i: (scores[i], -i)) if scored else len(scores) - 1


def chosen_index(history: list[ScoredAttempt], reason: str | None) -> int | None:
    """The attempt a loop returns when `reason` stopped it: the accepted one (the last) when the rule
    accepted, else the best so far (`best_index`)."""
    if reason == "threshold":
        return len(history) - 1
    return best_index([a.score for a in history])


def best_so_far(history: list[ScoredAttempt]) -> ScoredAttempt | None:
    """The highest-scoring attempt (the earliest among equals); unscored attempts only if nothing is scored."""
    i = best_index([a.score for a in history])
    return None if i is None else history[i]


def analyze_improvement(history: list[ScoredAttempt]) -> dict:
    """initial, final and best score, improvement (final - initial), iterations, score progression."""
    scores = [a.score for a in history]
    known = [s for s in scores if s is not None]
    initial = known[0] if known else None
    final = known[-1] if known else None
    return {
        "initial": initial,
        "final": final,
        "best": max(known) if known else None,
        "improvement": (final - initial) if known else None,
        "iterations": len(history),
        "progression": scores,
    }
