"""When a loop stops, and which draft it returns: one rule over a run's steps.

`StopRule.decide(steps)` returns a `Stop` or None; `StopRule.choose(drafts, stop)` is the draft
the run returns (`StopRule.drafts(steps)` reads the drafts off the steps). The stops and who accepts: docs/package.md, "The modules in detail".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from ..records import Step, Stop


@dataclass(frozen=True)
class Draft:
    """One draft of a run and how it was judged, read off the run's steps (`drafts_of`): a view for
    the stop rule and for tables, never built by a loop."""

    iteration: int  # 1 for the first draft
    code: str
    score: float | None  # the last judge's score; None: no usable score
    feedback: str = ""  # the last judge's text (a critique, a review), the refiner's input
    tokens: int = 0  # the tokens of every model call from this draft up to the next one
    # the judges' own decision (accept_by "judge"); None: the threshold decides
    accepted: bool | None = None
    # the hidden tests' verdict, where a lesson judged the draft (for calibration)
    passed: bool | None = None


def drafts_of(
    steps: Sequence[Step], accept_by: str = "threshold", unscored: float | None = None
) -> list[Draft]:
    """The drafts of a run, in order, each with its judges' verdicts (see `Draft`). Under
    `accept_by="judge"` a draft is accepted when the last verdict on it accepts it and no check
    step rejected it, and `accepted` is None when that verdict decided nothing (an unusable
    critique); `unscored` is the score a draft with no usable score counts as."""
    starts = [i for i, s in enumerate(steps) if s.is_draft]
    out = []
    for n, (i, end) in enumerate(
        zip(starts, [*starts[1:], len(steps)][: len(starts)], strict=True), 1
    ):
        judged = [s for s in steps[i + 1 : end] if s.verdict is not None]
        last = judged[-1] if judged else None
        score = last.verdict.score if last else None
        accepted = None
        # a judge whose verdict is None decided nothing
        if accept_by == "judge" and not (last and last.verdict.accepted is None):
            accepted = (
                bool(last)
                and last.verdict.accepted is True
                and all(s.verdict.accepted is True for s in judged if s.kind == "check")
            )
        tokens = sum(s.prompt_tokens + s.completion_tokens for s in steps[i:end])
        out.append(
            Draft(
                n,
                steps[i].code or "",
                unscored if score is None else score,
                last.reply if last else "",
                tokens,
                accepted,
            )
        )
    return out


@dataclass(frozen=True)
class StopRule:
    """When a loop stops: acceptance, the iteration budget, convergence, oscillation, regression (docs/package.md);
    the token budget is `over_budget`, checked before a call. `oscillation_window=0`, `patience=0` and
    `regression_drop=1` turn a rule off. Under `accept_by="judge"`, a judge that decided nothing usable stops the
    run (`INVALID_CRITIC`): the graph sends such a run to a person."""

    threshold: float = 8
    max_iterations: int = 3
    patience: int = 2
    regression_drop: float = 0.2
    oscillation_window: int = 4
    accept_by: str = field(default="threshold", repr=False)  # "threshold" or "judge"
    unscored: float | None = field(
        default=None, repr=False
    )  # the score an unusable verdict counts as

    def accepts(self, score: float | None) -> bool | None:
        """Does this score reach the threshold? None for no score: an unusable critique accepts nothing
        and rejects nothing."""
        return None if score is None else score >= self.threshold

    def drafts(self, steps: Sequence[Step]) -> list[Draft]:
        """The run's drafts as this rule reads them (`drafts_of` with its `accept_by` and `unscored`)."""
        return drafts_of(steps, self.accept_by, self.unscored)

    def decide(self, steps: Sequence[Step]) -> Stop | None:
        """Why the run stops now (a `Stop`), or None to go on."""
        return self.decide_drafts(self.drafts(steps))

    def decide_drafts(self, history: Sequence[Draft]) -> Stop | None:
        """`decide` on drafts already read (a recorded history, a table's made-up scores)."""
        stop = self._reason(history)
        if (
            stop not in (None, Stop.ACCEPTED)
            and self.accept_by == "threshold"
            and all(d.score is None for d in history)
        ):
            return Stop.INVALID_CRITIC  # whatever rule fired, no usable critique ever came back
        return stop

    def _reason(self, history: Sequence[Draft]) -> Stop | None:
        if not history:
            return None
        last = history[-1]
        scores = [a.score for a in history if a.score is not None]
        if self.accept_by == "judge" and last.accepted is None:
            return Stop.INVALID_CRITIC
        if last.accepted if last.accepted is not None else self.accepts(last.score):
            return Stop.ACCEPTED
        if (
            scores
            and last.score is not None
            and last.score < max(scores) * (1 - self.regression_drop)
        ):
            return Stop.REGRESSED
        if self.oscillation_window and _repeats_earlier_draft(history):
            return Stop.OSCILLATING
        if (
            self.oscillation_window
            and len(scores) >= self.oscillation_window
            and _swings(scores[-self.oscillation_window :])
        ):
            return Stop.OSCILLATING
        if self.patience and len(history) > self.patience and scores:
            best_before = max(
                (a.score for a in history[: -self.patience] if a.score is not None), default=None
            )
            recent = [a.score for a in history[-self.patience :] if a.score is not None]
            if best_before is not None and (not recent or max(recent) <= best_before):
                return Stop.CONVERGED
        if len(history) >= self.max_iterations:
            return Stop.MAX_ITERATIONS
        return None

    def choose(self, history: Sequence[Draft], stop: Stop | None) -> Draft | None:
        """The draft a run returns when `stop` ended it: the accepted one (the last), else the best so
        far (`best_index`); None for no draft."""
        return history[-1] if stop is Stop.ACCEPTED and history else best_so_far(history)

    def chosen(self, run) -> Draft | None:
        """The draft a finished run returned, as this rule reads it (`choose` on its drafts and stop)."""
        return self.choose(self.drafts(run.steps), run.stop)


def _normalise(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.strip().splitlines() if line.strip())


def _repeats_earlier_draft(history: Sequence[Draft]) -> bool:
    last = _normalise(history[-1].code)
    return bool(last) and any(_normalise(a.code) == last for a in history[:-1])


def _swings(scores: list[float]) -> bool:
    """Up, down, up (or down, up, down) over a spread (highest minus lowest) of at least one point.

    The spread, not the standard deviation: scores that stay above the regression bound
    (80% of the best) and below the threshold cannot reach a standard deviation of 1 on a
    1-10 scale, so a rule on it could never fire in a loop with the default settings.
    """
    deltas = [b - a for a, b in pairwise(scores)]
    alternating = all(d != 0 for d in deltas) and all(
        (x > 0) != (y > 0) for x, y in pairwise(deltas)
    )
    return alternating and max(scores) - min(scores) >= 1


def over_budget(used: int, next_cost: int, budget: int | None) -> bool:
    """The course's one token-budget rule, checked before a call (or an attempt) is made: the tokens
    spent already reach the budget, or spent plus the next one's estimated cost (the costliest such
    call so far) would pass it."""
    return budget is not None and (used >= budget or used + next_cost > budget)


def best_index(scores: Sequence[float | None]) -> int | None:
    """Where the best so far is: the highest score, the earliest among equals; an unscored entry
    only if nothing is scored (then the last). None for no entries. Every strategy that keeps its
    best draft (the scored loop, resampling, Reflexion) chooses with this."""
    if not scores:
        return None
    scored = [i for i, s in enumerate(scores) if s is not None]
    return max(scored, key=lambda i: (scores[i], -i)) if scored else len(scores) - 1


def best_so_far(history: Sequence[Draft]) -> Draft | None:
    """The highest-scoring attempt (the earliest among equals); unscored attempts only if nothing is scored."""
    i = best_index([a.score for a in history])
    return None if i is None else history[i]
