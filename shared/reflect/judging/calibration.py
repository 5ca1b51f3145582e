"""Calibrating a scored critic from recorded histories, with no new model calls: how its verdicts line up with
the hidden tests (`agreement`), what a loop would have returned under another stop rule (`replay_rule`, `sweep`),
the scores that say little (`uninformative_band`), and the lowest score worth trusting (`lowest_threshold`).
Each draft must carry its hidden-test verdict in `draft.passed`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..records import Stop
from .controller import Draft, StopRule, best_so_far
from .critics import Evaluation


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


def agreement_rows(
    verdicts: Mapping[str, Mapping[str, Evaluation]], truth: Mapping[str, bool], threshold: float
) -> dict[str, dict]:
    """Per critic (`verdicts`: name -> task id -> Evaluation), then 'accept-all' (a critic that accepts every
    draft): `agreement` with `truth` (task id -> hidden tests passed), its counts, and the critic's tokens."""
    tasks = next(iter(verdicts.values()), {})
    every = {**verdicts, "accept-all": {k: Evaluation(threshold, "accepted") for k in tasks}}
    rows = {}
    for name, evs in every.items():
        a = agreement([(ev.score, truth[k]) for k, ev in evs.items()], threshold)
        rows[name] = {
            "agree": a.rate,
            "true accept": a.true_accepts,
            "FALSE ACCEPT": a.false_accepts,
            "true reject": a.true_rejects,
            "FALSE REJECT": a.false_rejects,
            "unscored": a.unscored,
            "tokens": sum(ev.tokens for ev in evs.values()),
        }
    return rows


def loop_summary(histories: Mapping[str, Sequence[Draft]]) -> dict:
    """One evaluator's loops (task id -> history): loops whose returned draft (`best_so_far`) passes the hidden
    tests, attempts per loop, tokens over every attempt, loops that returned a later attempt than the first."""
    returned = [best_so_far(list(h)) for h in histories.values()]
    return {
        "passed": sum(bool(b and b.passed) for b in returned),
        "iterations": sum(len(h) for h in histories.values()) / max(len(histories), 1),
        "tokens": sum(a.tokens for h in histories.values() for a in h),
        "replaced": sum(bool(b and b.iteration > 1) for b in returned),
    }


def failure_census(histories: Sequence[Sequence[Draft]], rule: StopRule) -> dict[str, int]:
    """Five counts over recorded loops: attempts with blank code; loops `rule` stops as regressed or
    oscillating (`replay_rule`); refiner replies whose code is the code they were given; loops whose returned
    draft (`best_so_far`) reaches `rule.threshold` and fails the hidden tests."""
    stops = [replay_rule(h, rule)[1] for h in histories]
    return {
        "no code": sum(not a.code.strip() for h in histories for a in h),
        "regressed": stops.count(Stop.REGRESSED),
        "same draft back": sum(
            a.code.strip() == b.code.strip()
            for h in histories
            for a, b in zip(h, h[1:], strict=False)
        ),
        "oscillating": stops.count(Stop.OSCILLATING),
        "accepted but failing": len(
            accepted_but_failing(dict(enumerate(histories)), rule.threshold)
        ),
    }


def mean_scores(
    evaluations: Mapping[str, Evaluation], passed: Mapping[str, bool]
) -> tuple[float | None, float | None]:
    """Score inflation: (the mean score of the drafts that pass the hidden tests, of those that fail), leaving out
    unscored drafts; None for a group with no score."""

    def mean(xs: list[float]) -> float | None:
        return sum(xs) / len(xs) if xs else None

    scored = [(passed[k], ev.score) for k, ev in evaluations.items() if ev.score is not None]
    return mean([s for ok, s in scored if ok]), mean([s for ok, s in scored if not ok])


def lowest_threshold(pairs: list[tuple[float | None, bool]], target: float) -> float | None:
    """The lowest score at which accepting every draft scored at least that much accepts drafts that pass the
    hidden tests at a share of `target` or more (unscored drafts are never accepted); None when no score does."""
    scored = [(s, ok) for s, ok in pairs if s is not None]
    for t in sorted({s for s, _ in scored}):
        kept = [ok for s, ok in scored if s >= t]
        if sum(kept) / len(kept) >= target - 1e-12:
            return t
    return None


def accepted_but_failing(
    loops: Mapping[str, Sequence[Draft]], threshold: float
) -> dict[str, Draft]:
    """False convergence: the loops (task id -> history) whose returned draft (`best_so_far`) scores at least
    `threshold` while the hidden tests fail it, task id -> that draft."""
    out = {}
    for k, h in loops.items():
        b = best_so_far(list(h))
        if b is not None and b.score is not None and b.score >= threshold and b.passed is False:
            out[k] = b
    return out
