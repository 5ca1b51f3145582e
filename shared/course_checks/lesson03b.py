"""Lesson 03b's exercise checks, as specs (course_checks.spec): the test-first critic, the confusion counts (against
the package's `agreement`), the discordant drafts of two critics, a recorded loop cut under another rule (against
`replay_rule`), a loop summary, calibration by score (against `uninformative_band`), the threshold table (against
`sweep`), the failure census and the mean scores; then a critic's false accepts and the loops where the refiner ran.
Each is graded on made-up cases that tell apart the readings a learner may take, then on the lesson's own data."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from reflect.judging import calibration as calibration_module
from reflect.judging.calibration import agreement, replay_rule, sweep, uninformative_band
from reflect.judging.controller import Draft, StopRule, best_so_far
from reflect.judging.critics import Evaluation, LLMCritic
from reflect.records import Stop
from reflect.tasks.task import get_task
from reflect.testing import ScriptedChat

from . import exercise
from .spec import Case, Misreading, Values, show

Loops = Mapping[str, Mapping[str, Sequence[Draft]]]
NO_PACKAGE = (
    (calibration_module,),
    None,
    "your function called the package's calibration module: it is yours to write.",
)


def _ev(*scores: float | None) -> dict[str, Evaluation]:
    """Made-up verdicts on tasks a, b, c, ...: one score each, 100 tokens each."""
    return {chr(97 + i): Evaluation(s, "", usage=(90 + i, 10, 1)) for i, s in enumerate(scores)}


def _truth(flags: str) -> dict[str, bool]:
    """Made-up hidden verdicts: 'P' passes, 'f' fails, for tasks a, b, c, ..."""
    return {chr(97 + i): f == "P" for i, f in enumerate(flags)}


def _lesson(verdicts: Mapping[str, Mapping[str, Evaluation]], *rest: object) -> list[Case]:
    """The lesson's own verdicts as cases: one per critic, with the rest of the arguments."""
    return [
        Case((dict(evs), *rest), f"the {name} critic's verdicts") for name, evs in verdicts.items()
    ]


GOOD = "def count_vowels(text):\n    return sum(c in 'aeiouAEIOU' for c in text)\n"
HALF = "def count_vowels(text):\n    return sum(c in 'aeiou' for c in text)\n"  # fails one of two visible tests
BROKEN = "def count_vowels(text):\n    return 0\n"
UNLOADABLE = "def count_vowels(text) return 0\n"  # the tests critic scores it 1, with no FAIL line
SCRIPTED_CRITIQUE = (
    '{"score": 6, "issues": ["no docstring"], "strengths": [], "suggestion": "add one"}'
)


class _ScriptedTests:
    """A tests critic that gives every draft the same score, with a failure quoted; it keeps what it returned."""

    def __init__(self, score: float) -> None:
        self.score, self.returned = score, []

    def evaluate(self, task: object, code: str) -> Evaluation:
        ev = Evaluation(self.score, "1 of 5 visible checks failed:\n- FAIL f(4): expected 3, got 2")
        self.returned.append(ev)
        return ev


@exercise(
    "03b.1",
    hints=(
        "call the tests critic first; only when its score is 10 (every visible test passes) ask the LLM critic.",
        "__init__ keeps both critics (a TestGroundedCritic() when no tests critic is given); evaluate returns one of "
        "their two Evaluations as it is, never a new one.",
    ),
)
def tests_then_llm(tests_then_llm_class: Callable[[LLMCritic], object]) -> tuple[bool, str]:
    """Build 1: the test-first critic on count_vowels with a scripted model: failing drafts make no call, a passing one one."""
    task = get_task("count_vowels")
    scripted = ScriptedChat({"critic": [SCRIPTED_CRITIQUE] * 3})
    combo = tests_then_llm_class(LLMCritic(scripted))
    for label, code in (
        ("a draft that fails every visible test", BROKEN),
        ("a draft that fails one of two", HALF),
        ("a draft that does not load (a syntax error)", UNLOADABLE),
    ):
        ev = combo.evaluate(task, code)
        if scripted.calls:
            return (
                False,
                f"on {label} the model was asked {len(scripted.calls)} time(s): failing tests should answer alone.",
            )
        if not isinstance(ev, Evaluation) or ev.score is None or ev.score >= 10:
            return (
                False,
                f"on {label} evaluate returned {ev!r}: return the tests critic's Evaluation, failures quoted.",
            )
    ev = combo.evaluate(task, GOOD)
    if len(scripted.calls) != 1:
        return (
            False,
            f"on a draft that passes every visible test the model was asked {len(scripted.calls)} time(s), not once.",
        )
    if not isinstance(ev, Evaluation) or ev.score != 6:
        return (
            False,
            f"on a passing draft evaluate returned {ev!r}: return the LLM critic's Evaluation (the script scores it 6).",
        )
    nearly = _ScriptedTests(
        9.0
    )  # one visible test of several failed: 9 is above any threshold but not 10
    scripted_again = ScriptedChat({"critic": [SCRIPTED_CRITIQUE]})
    ev = tests_then_llm_class(LLMCritic(scripted_again), nearly).evaluate(task, HALF)
    if not nearly.returned:
        return (
            False,
            "given a tests critic (the second argument), evaluate never asked it: keep tests_critic when one is "
            "given, and a TestGroundedCritic() only when it is None.",
        )
    if not scripted_again.calls and ev is not nearly.returned[-1] and isinstance(ev, Evaluation):
        return (
            False,
            "evaluate returned a new Evaluation built from the tests critic's: return that Evaluation itself, "
            "so what the table and the loop read is what the tests said.",
        )
    if scripted_again.calls or not isinstance(ev, Evaluation) or ev.score != 9.0:
        return (
            False,
            "with a tests critic that scores a draft 9 (one visible test failed), evaluate asked the model or did not "
            f"return the tests' Evaluation (score {getattr(ev, 'score', ev)!r}): only a draft that passes every "
            "visible test (score 10) goes on.",
        )
    return (
        True,
        "failing visible tests answer without a model call; code that passes them gets the LLM's judgement (6 here).",
    )


# --- Build 2 (03b.2): the confusion counts and the table's rows ----------------------------------------

ROW_KEYS = (
    "agree",
    "true accept",
    "FALSE ACCEPT",
    "true reject",
    "FALSE REJECT",
    "unscored",
    "tokens",
)


def _counts(pairs: list, threshold: float) -> tuple[int, int, int, int, int]:
    a = agreement(pairs, threshold)
    return a.true_accepts, a.false_accepts, a.true_rejects, a.false_rejects, a.unscored


def _row(
    evaluations: Mapping[str, Evaluation], passed: Mapping[str, bool], threshold: float
) -> dict:
    a = agreement([(ev.score, passed[k]) for k, ev in evaluations.items()], threshold)
    values = (a.rate, a.true_accepts, a.false_accepts, a.true_rejects, a.false_rejects, a.unscored)
    return dict(
        zip(ROW_KEYS, (*values, sum(ev.tokens for ev in evaluations.values())), strict=True)
    )


def _pairs(evaluations: Mapping[str, Evaluation], passed: Mapping[str, bool]) -> list:
    return [(ev.score, passed[k]) for k, ev in evaluations.items()]


CONFUSION = Values(
    "confusion",
    [
        Case(c)
        for c in (
            ([(10, True), (10, False), (3, False), (3, True), (None, True)], 8),
            ([(8, True), (7.9, True), (8, False), (None, False)], 8),
            ([(5.5, False), (10, True)], 10),
            ([(6, True), (6, False), (9, False)], 6),
            ([], 8),
            ([(None, True), (None, False)], 8),
        )
    ],
    oracle=_counts,
    misreadings=[
        Misreading(
            lambda p, t: _counts([(s, ok) for s, ok in p if s != t], t),
            "A score equal to the threshold is an accept (>=).",
        ),
        Misreading(
            lambda p, t: _counts([(0 if s is None else s, ok) for s, ok in p], t),
            "A score of None is neither an accept nor a reject: count it as unscored.",
        ),
    ],
    forbid=NO_PACKAGE,
).register("03b.2")
ROW = Values(
    "agreement_row",
    [
        Case((_ev(*s), _truth(f), t))
        for s, f, t in (
            ((10, 9, 3, None, 7), "PfffP", 8),
            ((None, None), "Pf", 8),
            ((8, 6), "PP", 6),
        )
    ],
    oracle=_row,
    misreadings=[
        Misreading(
            lambda e, p, t: {
                **_row(e, p, t),
                "agree": (lambda r: (r["true accept"] + r["true reject"]) / len(e))(_row(e, p, t)),
            },
            "'agree' is over the drafts with a score: an unscored draft is neither agreement nor disagreement.",
        ),
    ],
).register("03b.2")


@exercise(
    "03b.2",
    hints=(
        "a draft is accepted when its score is at least the threshold; compare that with whether it passed. A score "
        "of None is neither an accept nor a reject: count it as unscored.",
        "four counters and one for None: accepted and passed is a true accept, accepted and failed a false accept, "
        "rejected and failed a true reject, rejected and passed a false reject. Return the five in that order.",
        "agreement_row: 'agree' is (true accepts + true rejects) over the drafts with a score (0 when none has one), "
        "'tokens' the sum of every evaluation's .tokens; the other keys are your five counts.",
    ),
)
def confusion_counts(confusion, agreement_row, verdicts, passed, threshold) -> tuple[bool, str]:  # noqa: ANN001
    """Build 2: the learner's confusion counts and rows against the package's agreement, on made-up verdicts and on
    every evaluator's verdicts of section 1."""
    lesson = [
        Case((_pairs(evs, passed), threshold), c.note)
        for c, evs in zip(_lesson(verdicts), verdicts.values(), strict=True)
    ]
    problem = CONFUSION.problem(confusion, also=lesson) or ROW.problem(
        agreement_row, also=_lesson(verdicts, passed, threshold)
    )
    if problem:
        return False, problem
    return (
        True,
        f"Your counts match the package's on {len(CONFUSION.cases)} made-up cases and every evaluator's verdicts, and so do your rows.",
    )


# --- Build 3 (03b.3): where two critics disagree ---------------------------------------------------------


def _disagreements(a, b, truth, threshold):  # noqa: ANN001
    def right(evs: Mapping[str, Evaluation]) -> set[str]:
        return {
            k
            for k, ev in evs.items()
            if ev.score is not None and (ev.score >= threshold) == truth[k]
        }

    return sorted(right(a) - right(b)), sorted(right(b) - right(a))


PAIRED = Values(
    "disagreements",
    [
        Case((_ev(10, 3, None, 9, 2, 8), _ev(2, 9, 4, None, 1, 7), _truth("PfffP" + "P"), 8)),
        Case((_ev(8, 8, 5), _ev(7, 9, None), _truth("PfP"), 8)),
        Case((_ev(6, 2), _ev(9, 5), _truth("Pf"), 6)),
    ],
    oracle=_disagreements,
    misreadings=[
        Misreading(
            lambda a, b, t, th: _disagreements(
                {k: Evaluation(0 if e.score is None else e.score, "") for k, e in a.items()},
                {k: Evaluation(0 if e.score is None else e.score, "") for k, e in b.items()},
                t,
                th,
            ),
            "A score of None is right on nothing: neither an accept nor a reject.",
        ),
        Misreading(
            lambda a, b, t, th: _disagreements(a, b, t, th)[::-1],
            "Return (only a right, only b right), in that order.",
        ),
    ],
).register("03b.3")


@exercise(
    "03b.3",
    hints=(
        "first write right(evaluations): the task ids where the critic's accept (score >= threshold) matches "
        "truth[task_id]. Then the two answers are set differences, one each way.",
        "a score of None is right on nothing: neither an accept nor a reject. Return (only a right, only b right), in that order.",
    ),
)
def paired(disagreements, verdicts, passed, held_out, threshold) -> tuple[bool, str]:  # noqa: ANN001
    """Build 3: the learner's discordant drafts of two critics, on made-up verdicts and on every pair of section 1's
    critics against all the hidden tests and against the held-out half."""
    names = list(verdicts)
    lesson = [
        Case(
            (dict(verdicts[x]), dict(verdicts[y]), dict(truth), threshold),
            f"{x} against {y}, {label}",
        )
        for label, truth in (("all the hidden tests", passed), ("the held-out half", held_out))
        for x in names
        for y in names
        if x != y
    ]
    problem = PAIRED.problem(disagreements, also=lesson)
    if problem:
        return False, problem
    return (
        True,
        f"your disagreements match on made-up verdicts and on every pair of the {len(names)} critics, against both truths.",
    )


# --- Build 4 (03b.4): a recorded loop cut under another rule ----------------------------------------------


def _d(
    score: float | None, passed: bool | None = None, code: str | None = None, tokens: int = 100
) -> Draft:
    return Draft(
        1,
        code if code is not None else f"def f():\n    return {score!r}\n",
        score,
        tokens=tokens,
        passed=passed,
    )


def _history(*drafts: Draft) -> list[Draft]:
    return [
        Draft(i, d.code, d.score, tokens=d.tokens + i, passed=d.passed)
        for i, d in enumerate(drafts, 1)
    ]


def _show(value: object) -> str:
    if isinstance(value, list) and value and all(isinstance(d, Draft) for d in value):
        return f"<drafts scored {[d.score for d in value]}>"
    if isinstance(value, StopRule):
        return f"<StopRule threshold={value.threshold}, max_iterations={value.max_iterations}>"
    if isinstance(value, (list, tuple)) and value and all(isinstance(h, list) for h in value):
        return f"<{len(value)} histories scored {[[d.score for d in h] for h in value]}>"
    return show(value)


# each a stop path: accepted at draft 2, converged, regressed (best is not the last), never scored, a recording
# that ends before the rule stops, and the same draft twice
MADE_UP_HISTORIES = (
    _history(_d(5, False), _d(9, True), _d(10, True)),
    _history(_d(6, False), _d(6, False), _d(6, False, "def f():\n    return 'other'\n")),
    _history(_d(9, True), _d(5, False), _d(6, False)),
    _history(_d(None, False), _d(None, False), _d(None, True)),
    _history(_d(6, False), _d(7, True)),
    _history(
        _d(5, False, "def f():\n    return 1\n"),
        _d(7, False, "def f():\n    return 2\n"),
        _d(5, False, "def f():\n    return 1\n"),
    ),
)
RULES = (
    StopRule(threshold=8, max_iterations=3),
    StopRule(threshold=10, max_iterations=3),
    StopRule(threshold=6, max_iterations=2),
)
CUT = Values(
    "cut",
    [Case((list(h), r)) for r in RULES for h in MADE_UP_HISTORIES],
    oracle=lambda h, rule: tuple(replay_rule(h, rule)),
    misreadings=[
        Misreading(
            lambda h, rule: (h, rule.decide_drafts(h)),
            "That decides on the whole recording: stop at the first draft whose prefix the rule stops.",
        ),
        Misreading(
            lambda h, rule: (lambda d, r: (d[:-1], r))(*replay_rule(h, rule)),
            "Keep the draft the rule stopped on.",
        ),
    ],
    forbid=NO_PACKAGE,
    show=_show,
).register("03b.4")


@exercise(
    "03b.4",
    hints=(
        "a loop run under a rule would have stopped at the first draft k where rule.decide_drafts(history[:k]) "
        "is not None; the drafts after k were never needed.",
        "try k = 1, 2, ... up to len(history); return (history[:k], that reason) at the first reason, and the whole "
        "history with None when no prefix stops.",
    ),
)
def cut_a_loop(cut, histories) -> tuple[bool, str]:  # noqa: ANN001
    """Build 4: the learner's cut against the package's replay_rule on made-up histories (every stop path) under three
    rules, and on the recorded LLM-critic loops under thresholds 6 to 10."""
    lesson = [
        Case((list(h), StopRule(threshold=t, max_iterations=3)), f"the recorded loop on {k}")
        for k, h in histories.items()
        for t in (6, 8, 10)
    ]
    problem = CUT.problem(cut, also=lesson)
    if problem:
        return False, problem
    return True, (
        f"your cut matches replay_rule on {len(MADE_UP_HISTORIES)} made-up histories under {len(RULES)} rules and on "
        f"the {len(histories)} recorded loops under thresholds 6, 8 and 10."
    )


# --- Build 5 (03b.5): what one evaluator's loops did ------------------------------------------------------


def _summary(histories: Mapping[str, Sequence[Draft]]) -> dict:
    returned = [best_so_far(list(h)) for h in histories.values()]
    return {
        "passed": sum(bool(b.passed) for b in returned),
        "iterations": sum(len(h) for h in histories.values()) / len(histories),
        "tokens": sum(a.tokens for h in histories.values() for a in h),
        "replaced": sum(b.iteration > 1 for b in returned),
    }


SUMMARY = Values(
    "loop_summary",
    [
        Case(({f"task{i}": h for i, h in enumerate(MADE_UP_HISTORIES[j:k])},))
        for j, k in ((0, 6), (2, 4), (0, 1), (4, 6))
    ]
    + [
        Case(
            (
                {
                    "a": _history(_d(9, False), _d(5, True)),
                    "b": _history(_d(6, False), _d(8, False), _d(4, True)),
                },
            )
        )
    ],
    oracle=_summary,
    misreadings=[
        Misreading(
            lambda hs: {
                **_summary(hs),
                "passed": sum(bool(h[-1].passed) for h in hs.values()),
                "replaced": sum(h[-1].iteration > 1 for h in hs.values()),
            },
            "The draft a loop returns is best_so_far(h), not the last attempt.",
        ),
        Misreading(
            lambda hs: {**_summary(hs), "replaced": sum(len(h) > 1 for h in hs.values())},
            "'replaced' counts loops whose returned draft is not the first, not loops with more than one attempt.",
        ),
    ],
    show=lambda v: (
        f"<loops scored {[[d.score for d in h] for h in v.values()]}>"
        if isinstance(v, Mapping) and all(isinstance(h, list) for h in v.values())
        else show(v)
    ),
).register("03b.5")


@exercise(
    "03b.5",
    hints=(
        "the draft a loop returns is best_so_far(h), not the last attempt; its .passed is the hidden tests' verdict "
        "and its .iteration says whether it is the first draft (1) or a later one.",
        "'iterations' is the mean number of attempts per loop; 'tokens' the sum over every attempt of every loop; "
        "'replaced' counts loops whose returned draft is not the first, which is not the same as loops with more than "
        "one attempt.",
    ),
)
def loop_table(loop_summary, loops) -> tuple[bool, str]:  # noqa: ANN001
    """Build 5: the learner's summary of one evaluator's loops, on made-up loops and on section 2's."""
    problem = SUMMARY.problem(
        loop_summary, also=[Case((dict(h),), f"the {name} loops") for name, h in loops.items()]
    )
    if problem:
        return False, problem
    return True, "your summary matches on made-up loops and on every evaluator's loops."


# --- Build 6 (03b.6): what each score says ----------------------------------------------------------------


def _outcomes(pairs: Sequence[tuple[float | None, bool]]) -> dict:
    out: dict = {}
    for score, passed in pairs:
        if score is not None:
            out.setdefault(score, []).append(passed)
    return out


CALIBRATION_PAIRS = (  # (pairs, margin)
    (
        [(9, True)] * 4 + [(9, False)] + [(4, True)] * 4 + [(4, False)],
        0.2,
    ),  # base rate 0.8, far from 50%
    (
        [(10, True), (10, True), (10, False), (5, False), (1, False), (None, True)],
        0.2,
    ),  # scored drafts only
    (
        [(3, True)] * 3 + [(3, False)] + [(7, False)] * 3 + [(7, True)],
        0.25,
    ),  # exactly the margin away
    ([(9, True)] * 6 + [(2, False)] * 2, 0.25),  # unequal groups: the base rate pools the drafts
    ([(None, True), (None, False)], 0.2),
    ([], 0.2),
)


def _band(pairs: Sequence, margin: float, base: float | None = None, strict: bool = False) -> list:
    """A misreading of the band: another base rate, or < for <=."""
    groups, scored = _outcomes(pairs), [ok for s, ok in pairs if s is not None]
    if not scored:
        return []
    base = sum(scored) / len(scored) if base is None else base
    near = (lambda d: d < margin) if strict else (lambda d: d <= margin + 1e-12)
    return sorted(s for s, oks in groups.items() if near(abs(sum(oks) / len(oks) - base)))


OUTCOMES = Values(
    "outcomes_by_score",
    [Case((p,)) for p, _ in CALIBRATION_PAIRS],
    oracle=_outcomes,
    equal=lambda got, want: (
        isinstance(got, Mapping)
        and set(got) == set(want)
        and all(sorted(list(got[s])) == sorted(v) for s, v in want.items())
    ),
    forbid=NO_PACKAGE,
).register("03b.6")
BAND = Values(
    "says_little",
    [Case((p,), kwargs={"margin": m}) for p, m in CALIBRATION_PAIRS],
    oracle=lambda pairs, margin: uninformative_band(pairs, margin=margin),
    misreadings=[
        Misreading(
            lambda pairs, margin: _band(
                pairs, margin, base=sum(ok for _, ok in pairs) / max(len(pairs), 1)
            ),
            "The base rate counts only the drafts with a score.",
        ),
        Misreading(
            lambda pairs, margin: _band(pairs, margin, base=0.5),
            "The band is around the base rate, the share of scored drafts that pass, not around 50%.",
        ),
        Misreading(
            lambda pairs, margin: _band(pairs, margin, strict=True),
            "A share exactly `margin` away is still within it (<=).",
        ),
    ],
    forbid=NO_PACKAGE,
).register("03b.6")


@exercise(
    "03b.6",
    hints=(
        "outcomes_by_score groups the hidden-test verdicts by score, leaving out a score of None. says_little "
        "compares each score's share of passing drafts with the base rate: the share over every scored draft.",
        "the base rate counts only scored drafts; a share exactly `margin` away is still within it (<=); pairs with "
        "no score at all give an empty list; return the scores sorted.",
    ),
)
def calibration(outcomes_by_score, says_little, pairs) -> tuple[bool, str]:  # noqa: ANN001
    """Build 6: the learner's grouping and band against the package's uninformative_band, on made-up pairs and on the
    test critic's pairs of section 3."""
    lesson = [Case((list(pairs),), "the test critic's pairs of section 3")]
    problem = OUTCOMES.problem(outcomes_by_score, also=lesson) or BAND.problem(
        says_little, also=[Case((list(pairs),), lesson[0].note, {"margin": 0.2})]
    )
    if problem:
        return False, problem
    return True, (
        f"your grouping and band match the package's uninformative_band on {len(CALIBRATION_PAIRS)} made-up cases and "
        f"section 3's {len(pairs)} pairs (band: {uninformative_band(pairs) or 'empty'})."
    )


# --- Build 7 (03b.7): the threshold table -----------------------------------------------------------------

THRESHOLDS = Values(
    "threshold_table",
    [
        Case(([list(h) for h in MADE_UP_HISTORIES], [6, 8, 10]), kwargs={"max_iterations": 3}),
        Case(([list(h) for h in MADE_UP_HISTORIES], [7, 9]), kwargs={"max_iterations": 2}),
        Case(([list(h) for h in MADE_UP_HISTORIES[1:4]], [8]), kwargs={"max_iterations": 3}),
    ],
    oracle=lambda hs, ts, max_iterations: sweep(hs, ts, max_iterations=max_iterations),
    misreadings=[
        Misreading(
            lambda hs, ts, max_iterations: sweep(hs, ts, max_iterations=3),
            "Use the max_iterations you are given.",
        ),
    ],
    forbid=NO_PACKAGE,
    show=_show,
).register("03b.7")


@exercise(
    "03b.7",
    hints=(
        "for each threshold make StopRule(threshold=t, max_iterations=max_iterations), cut every history with it, "
        "and average over the histories: the drafts kept, the hidden verdict of the draft the loop returns, the "
        "tokens of the drafts kept.",
        "the draft a loop returns is rule.choose(kept, reason): the accepted one, else the best so far, not the "
        "last; its .passed is the hidden tests' verdict. Tokens count only the drafts the cut kept.",
    ),
)
def threshold_rows(threshold_table, histories) -> tuple[bool, str]:  # noqa: ANN001
    """Build 7: the learner's threshold table against the package's sweep."""
    lesson = [
        Case(
            ([list(h) for h in histories], [6, 7, 8, 9, 10]),
            "section 2's recorded loops",
            {"max_iterations": 3},
        )
    ]
    problem = THRESHOLDS.problem(threshold_table, also=lesson)
    if problem:
        return False, problem
    return (
        True,
        f"your table matches the package's sweep on made-up histories and on the {len(histories)} recorded loops.",
    )


# --- Build 8 (03b.8): a census of failure modes -------------------------------------------------------------


def _census(
    histories: Sequence[Sequence[Draft]], rule: StopRule, strip: bool = True, returned=best_so_far
) -> dict[str, int]:  # noqa: ANN001
    def same_code(a: Draft, b: Draft) -> bool:
        return a.code.strip() == b.code.strip() if strip else a.code == b.code

    stops = [replay_rule(h, rule)[1] for h in histories]
    chosen = [returned(list(h)) for h in histories]
    return {
        "no code": sum(not a.code.strip() for h in histories for a in h),
        "regressed": stops.count(Stop.REGRESSED),
        "same draft back": sum(
            same_code(a, b) for h in histories for a, b in zip(h, h[1:], strict=False)
        ),
        "oscillating": stops.count(Stop.OSCILLATING),
        "accepted but failing": sum(
            b is not None
            and b.score is not None
            and b.score >= rule.threshold
            and b.passed is False
            for b in chosen
        ),
    }


CENSUS_HISTORIES = [
    *MADE_UP_HISTORIES,
    _history(
        _d(8, False), _d(None, False, "  \n"), _d(3, False)
    ),  # an empty reply, then a regression
    _history(
        _d(4, False, "def f():\n    return 1\n"), _d(9, False, "def f():\n    return 1\n  ")
    ),  # same code, trailing space
    _history(_d(10, True)),
    _history(
        _d(9, False), _d(5, False), _d(9, False, "def f():\n    return 'again'\n")
    ),  # two failing accepts, one loop
    _history(
        _d(None, False, ""), _d(None, False, "\n"), _d(5, False)
    ),  # two blank attempts, one loop
    _history(_d(8, False), _d(10, True)),  # an accepted failing draft, then a better one returned
]
CENSUS = Values(
    "census",
    [
        Case(([list(h) for h in CENSUS_HISTORIES[j:k]], StopRule(threshold=t, max_iterations=3)))
        for j, k, t in ((0, 12, 8), (0, 10, 9), (6, 12, 8), (0, 6, 10))
    ],
    oracle=_census,
    misreadings=[
        Misreading(
            lambda hs, r: _census(hs, r, strip=False),
            "Compare drafts with .strip(): a trailing space is the same code.",
        ),
        Misreading(
            lambda hs, r: _census(hs, r, returned=lambda h: h[-1]),
            "'accepted but failing' reads the draft the loop returns, best_so_far(h), not the last attempt.",
        ),
    ],
    show=_show,
).register("03b.8")


@exercise(
    "03b.8",
    hints=(
        "each count reads the histories, never the model: an attempt with no code, a loop your cut stops as "
        "Stop.REGRESSED or Stop.OSCILLATING, a refiner reply equal to the draft before it, and a loop whose returned "
        "draft (best so far) the critic accepted while the hidden tests fail it.",
        "compare drafts with .strip() (a trailing space is the same code); 'accepted but failing' reads best_so_far(h), "
        "with a score at least rule.threshold and passed False; a None score is never accepted.",
    ),
)
def failure_census(census, histories, rule) -> tuple[bool, str]:  # noqa: ANN001
    """Build 8: the learner's census of failure modes against the same counts made with the package's replay_rule."""
    problem = CENSUS.problem(
        census, also=[Case(([list(h) for h in histories], rule), "section 2's recorded loops")]
    )
    if problem:
        return False, problem
    counts = _census([list(h) for h in histories], rule)
    return (
        True,
        "your census matches on made-up histories and on every recorded loop: "
        + ", ".join(f"{k} {v}" for k, v in counts.items())
        + ".",
    )


# --- Build 9 (03b.9): the inflation means --------------------------------------------------------------------


def _means(evaluations: Mapping[str, Evaluation], passed: Mapping[str, bool]) -> tuple:
    def mean(xs: list) -> float | None:
        return sum(xs) / len(xs) if xs else None

    ok = [ev.score for k, ev in evaluations.items() if passed[k] and ev.score is not None]
    bad = [ev.score for k, ev in evaluations.items() if not passed[k] and ev.score is not None]
    return mean(ok), mean(bad)


MEANS = Values(
    "mean_scores",
    [
        Case((_ev(*s), _truth(f)))
        for s, f in (
            ((10, 6, None, 3), "PPff"),
            ((9, None), "Pf"),
            ((4, 8, 10), "fPf"),
            ((None, 7), "Pf"),
        )
    ],
    oracle=_means,
    misreadings=[
        Misreading(
            lambda e, p: _means({k: Evaluation(v.score or 0, "") for k, v in e.items()}, p),
            "A score of None is left out, not counted as 0.",
        ),
        Misreading(
            lambda e, p: _means(e, p)[::-1], "Return (passing mean, failing mean), in that order."
        ),
    ],
).register("03b.9")


@exercise(
    "03b.9",
    hints=(
        "split the drafts by the hidden tests' verdict, keep the scores that are not None, and average each group.",
        "return (passing mean, failing mean), in that order; a group with no score gives None, not 0 or an error.",
    ),
)
def inflation(mean_scores, verdicts, passed) -> tuple[bool, str]:  # noqa: ANN001
    """Build 9: the learner's mean scores of passing and failing drafts, on made-up and real verdicts."""
    problem = MEANS.problem(mean_scores, also=_lesson(verdicts, dict(passed)))
    if problem:
        return False, problem
    return True, "your means match on made-up verdicts and on every evaluator's."


# --- Exercise 10 (03b.10): a critic's false accepts -----------------------------------------------------------


def _false_accepts(
    evaluations: Mapping[str, Evaluation], passed: Mapping[str, bool], threshold: float
) -> list[str]:
    return sorted(
        k
        for k, ev in evaluations.items()
        if ev.score is not None and ev.score >= threshold and not passed[k]
    )


FALSE_ACCEPTS = Values(
    "false_accepts",
    [
        Case(
            (
                {
                    "e": Evaluation(10, ""),
                    "b": Evaluation(8, ""),
                    "d": Evaluation(None, ""),
                    "a": Evaluation(9.5, ""),
                    "c": Evaluation(7.9, ""),
                },
                {"a": False, "b": False, "c": False, "d": False, "e": True},
                8,
            )
        ),
        Case((_ev(6, 9, 5), _truth("ffP"), 6)),
        Case((_ev(10, 10), _truth("PP"), 8)),
    ],
    oracle=_false_accepts,
    misreadings=[
        Misreading(
            lambda e, p, t: sorted(k for k in e if not p[k]),
            "That is every failing draft, whatever the critic scored: only the ones it accepted.",
        ),
        Misreading(
            lambda e, p, t: sorted(
                k for k, v in e.items() if v.score is not None and v.score > t and not p[k]
            ),
            "A score equal to the threshold is an accept (>=).",
        ),
        Misreading(
            lambda e, p, t: [
                k for k, v in e.items() if v.score is not None and v.score >= t and not p[k]
            ],
            "Return the task ids sorted.",
        ),
    ],
).register("03b.10")


@exercise(
    "03b.10",
    hints=(
        "a false accept is a draft the critic accepted (its score is at least the threshold) while the hidden tests "
        "fail it (passed[task_id] is False). A score of None is a reply the critic could not use: not an accept.",
        "try your function by hand on the cases the made-up verdicts hold: a score exactly at the threshold, a "
        "score of None, a failing draft the critic scored below the threshold. Then look at the order of what it returns.",
    ),
)
def count_false_accepts(
    false_accepts, voting_false_tasks, verdicts, passed, threshold
) -> tuple[bool, str]:  # noqa: ANN001
    """Exercise 10: false_accepts on made-up verdicts and on every critic of section 1, then voting_false_tasks."""
    problem = FALSE_ACCEPTS.problem(false_accepts, also=_lesson(verdicts, dict(passed), threshold))
    if problem:
        return False, problem
    truth = _false_accepts(verdicts["voting"], passed, threshold)
    if not isinstance(voting_false_tasks, (list, tuple)) or list(voting_false_tasks) != truth:
        return (
            False,
            f"false_accepts is right; now voting_false_tasks = {voting_false_tasks!r}: apply it to the voting critic.",
        )
    failing = sorted(k for k in verdicts["voting"] if not passed[k])
    every = (
        ": every failing draft" if truth == failing else f" of the {len(failing)} failing drafts"
    )
    others = ", ".join(
        f"{n} {len(_false_accepts(e, passed, threshold))}"
        for n, e in verdicts.items()
        if n != "voting"
    )
    return (
        True,
        f"{len(truth)} false accepts for the voting critic ({', '.join(truth)}){every}. The other critics' counts: {others}.",
    )


# --- Exercise 11 (03b.11): the loops where the refiner ran -----------------------------------------------------


def _later(loops: Loops) -> bool:
    return any(
        bool(a.passed) for histories in loops.values() for h in histories.values() for a in h[1:]
    )


LATER = Values(
    "later_pass",
    [
        Case((loops,))
        for loops in (
            {
                "tests": {
                    "flatten": [Draft(1, "a", 5.5, passed=False), Draft(2, "b", 10, passed=True)]
                }
            },
            {
                "tests": {
                    "flatten": [Draft(1, "a", 10, passed=True)],
                    "caesar": [Draft(1, "c", 5.5, passed=False)],
                }
            },
            {"llm": {"caesar": [Draft(1, "a", 9, passed=False), Draft(2, "a", 9, passed=False)]}},
            {
                "tests": {
                    "flatten": [
                        Draft(1, "a", 5, passed=False),
                        Draft(2, "b", 9, passed=True),
                        Draft(3, "c", 6, passed=False),
                    ]
                }
            },
            {"tests": {"flatten": [Draft(1, "a", 9, passed=False), Draft(2, "b", 5, passed=True)]}},
            {
                "llm": {"flatten": [Draft(1, "a", 9, passed=True), Draft(2, "b", 9, passed=False)]},
                "tests": {},
            },
            {  # a later pass in the second evaluator only, at the third attempt
                "llm": {
                    "flatten": [Draft(1, "a", 4, passed=False), Draft(2, "b", 5, passed=False)]
                },
                "tests": {
                    "caesar": [
                        Draft(1, "a", 3, passed=False),
                        Draft(2, "b", 4, passed=False),
                        Draft(3, "c", 9, passed=True),
                    ]
                },
            },
        )
    ],
    oracle=_later,
    misreadings=[
        Misreading(
            lambda loops: any(
                bool(a.passed) for hs in loops.values() for h in hs.values() for a in h
            ),
            "Only attempts after the first count: the first is the lesson-01 draft.",
        ),
    ],
).register("03b.11")


@exercise(
    "03b.11",
    hints=(
        "loops[name][task_id] is the list of attempts of one loop, in order; the first is the lesson-01 draft, "
        "every later one is a refiner's reply.",
        "the table's 'replaced' column asks which attempt a loop returned; you need something else about a history. "
        "For later_pass, which attempts of a history are the refiner's, and which one is not?",
    ),
)
def refiner_runs(refined, later_pass, loops) -> tuple[bool, str] | tuple[bool, str, bool]:  # noqa: ANN001
    """Exercise 11: `refined` (the loops where the refiner ran) against section 2's loops, and `later_pass` on
    made-up loops and on them."""
    want = {
        name: sorted(k for k, h in histories.items() if len(h) > 1)
        for name, histories in loops.items()
    }
    if not isinstance(refined, Mapping) or set(refined) != set(want):
        return (
            False,
            f"refined should be a dict with one entry per evaluator ({', '.join(want)}), not {refined!r}.",
        )
    got = {
        n: list(refined[n]) if isinstance(refined[n], (list, tuple)) else refined[n] for n in want
    }
    if got != want:
        replaced = {
            n: sorted(k for k, h in hs.items() if h and best_so_far(list(h)).iteration > 1)
            for n, hs in loops.items()
        }
        if got == replaced:
            return False, (
                "that is the table's 'replaced' column: loops that returned a later attempt. A loop where "
                "the refiner ran may still return its first draft; count the attempts instead."
            )
        wrong = [n for n in want if got[n] != want[n]]
        return (
            False,
            f"refined is wrong for {', '.join(wrong)} (each value: the sorted task ids whose loop made more than one attempt).",
        )
    if not callable(later_pass):
        return (
            False,
            "refined is right; now write later_pass(loops), a function that returns True or False.",
            False,
        )
    problem = LATER.problem(later_pass, also=[Case((loops,), "section 2's loops")])
    if problem:
        return False, f"refined is right; {problem}"
    n = sum(map(len, want.values()))
    return True, (
        f"the refiner ran in {n} loop(s) ({'; '.join(f'{k}: {v}' for k, v in want.items() if v) or 'none'}); "
        f"a later attempt passed the hidden tests: {_later(loops)}."
    )
