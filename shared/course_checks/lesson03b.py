"""Lesson 03b's exercise checks: the test-first critic, the confusion counts (against the package's
`agreement`), a recorded loop cut under another rule (against `replay_rule`), calibration by score
(against `uninformative_band`), the threshold table (against `sweep`) and the failure census; then a
critic's false accepts and the loops where the refiner ran."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from reflect.judging import calibration as calibration_module
from reflect.judging.calibration import agreement, replay_rule, sweep, uninformative_band
from reflect.judging.controller import Draft, StopRule, best_so_far
from reflect.judging.critics import Evaluation, LLMCritic
from reflect.records import Stop
from reflect.tasks.task import get_task
from reflect.testing import ScriptedChat

from . import exercise, numbers_off, package_calls

Loops = Mapping[str, Mapping[str, Sequence[Draft]]]


def _false_accepts(
    evaluations: Mapping[str, Evaluation], passed: Mapping[str, bool], threshold: float
) -> list[str]:
    """The truth exercise 10 is graded against: accepted (a score at least `threshold`), yet failing."""
    return sorted(
        k
        for k, ev in evaluations.items()
        if ev.score is not None and ev.score >= threshold and not passed[k]
    )


# Made-up verdicts where "every failing draft" is not the answer: one failing draft is rejected, one is
# unscored, one sits exactly on the threshold; listed out of order, so an unsorted answer shows.
MADE_UP = {
    "e": Evaluation(10, ""),
    "b": Evaluation(8, ""),
    "d": Evaluation(None, ""),
    "a": Evaluation(9.5, ""),
    "c": Evaluation(7.9, ""),
}
MADE_UP_PASSED = {"a": False, "b": False, "c": False, "d": False, "e": True}


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
    false_accepts: Callable[[Mapping[str, Evaluation], Mapping[str, bool], float], list[str]],
    voting_false_tasks: list[str] | None,
    verdicts: Mapping[str, Mapping[str, Evaluation]],
    passed: Mapping[str, bool],
    threshold: float,
) -> tuple[bool, str]:
    """Exercise 10: false_accepts on made-up verdicts and on every critic of section 1, then voting_false_tasks."""
    want = _false_accepts(MADE_UP, MADE_UP_PASSED, 8)
    got = false_accepts(dict(MADE_UP), dict(MADE_UP_PASSED), 8)
    if not isinstance(got, (list, tuple)) or list(got) != want:
        return False, (
            f"on made-up verdicts (scores {', '.join(f'{k}: {ev.score}' for k, ev in MADE_UP.items())}; "
            f"only 'e' passes; threshold 8) false_accepts returned {got!r}, not {want}."
        )
    for name, evaluations in verdicts.items():
        truth = _false_accepts(evaluations, passed, threshold)
        got = false_accepts(evaluations, passed, threshold)
        if not isinstance(got, (list, tuple)) or list(got) != truth:
            return (
                False,
                f"on the {name} critic's verdicts false_accepts returned {got!r}: count them again.",
            )
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
        f"{name} {len(_false_accepts(evs, passed, threshold))}"
        for name, evs in verdicts.items()
        if name != "voting"
    )
    return (
        True,
        f"{len(truth)} false accepts for the voting critic ({', '.join(truth)}){every}. The other critics' counts: {others}.",
    )


def _refined(loops: Loops) -> dict[str, list[str]]:
    """The truth exercise 11 is graded against: the loops with more than one attempt, by evaluator."""
    return {
        name: sorted(k for k, h in histories.items() if len(h) > 1)
        for name, histories in loops.items()
    }


def _later(loops: Loops) -> bool:
    return any(
        bool(a.passed) for histories in loops.values() for h in histories.values() for a in h[1:]
    )


MADE_UP_LOOPS = (
    {"tests": {"flatten": [Draft(1, "a", 5.5, passed=False), Draft(2, "b", 10, passed=True)]}},
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
        "tests": {
            "flatten": [
                Draft(1, "a", 5, passed=False),
                Draft(2, "b", 6, passed=False),
                Draft(3, "c", 9, passed=True),
            ]
        }
    },
)


@exercise(
    "03b.11",
    hints=(
        "loops[name][task_id] is the list of attempts of one loop, in order; the first is the lesson-01 draft, "
        "every later one is a refiner's reply.",
        "the table's 'replaced' column asks which attempt a loop returned; you need something else about a history. "
        "For later_pass, which attempts of a history are the refiner's, and which one is not?",
    ),
)
def refiner_runs(
    refined: Mapping[str, list[str]] | None,
    later_pass: Callable[[Loops], object] | None,
    loops: Loops,
) -> tuple[bool, str] | tuple[bool, str, bool]:
    """Exercise 11: `refined` (the loops where the refiner ran) against section 2's loops, and
    `later_pass` on them and on made-up loops."""
    want = _refined(loops)
    if not isinstance(refined, Mapping) or set(refined) != set(want):
        return (
            False,
            f"refined should be a dict with one entry per evaluator ({', '.join(want)}), not {refined!r}.",
        )
    replaced = {
        name: sorted(k for k, h in histories.items() if h and best_so_far(list(h)).iteration > 1)
        for name, histories in loops.items()
    }
    got = {
        name: sorted(refined[name])
        if isinstance(refined[name], (list, tuple, set, frozenset))
        else refined[name]
        for name in want
    }
    if got != want:
        if got == replaced and replaced != {name: [] for name in want}:
            return False, (
                "that is the table's 'replaced' column: loops that returned a later attempt. A loop where "
                "the refiner ran may still return its first draft; count the attempts instead."
            )
        wrong = [name for name in want if got[name] != want[name]]
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
    for case in (loops, *MADE_UP_LOOPS):
        answer, truth = later_pass(case), _later(case)
        if answer is not truth:
            first = any(bool(h[0].passed) for hs in case.values() for h in hs.values() if h)
            why = " Only attempts after the first count." if answer and first else ""
            where = "section 2's loops" if case is loops else f"made-up loops {case}"
            return (
                False,
                f"refined is right; later_pass gave {answer!r} on {where}, where it is {truth}.{why}",
            )
    n = sum(map(len, want.values()))
    return True, (
        f"the refiner ran in {n} loop(s) ({'; '.join(f'{k}: {v}' for k, v in want.items() if v) or 'none'}); "
        f"a later attempt passed the hidden tests: {_later(loops)}."
    )


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


# The confusion counts (03b.2): (score, passed) pairs and a threshold; the truth is the package's agreement.
CONFUSION_CASES: tuple[tuple[list[tuple[float | None, bool]], float], ...] = (
    ([(10, True), (10, False), (3, False), (3, True), (None, True)], 8),
    ([(8, True), (7.9, True), (8, False), (None, False)], 8),
    ([(5.5, False), (10, True)], 10),
    ([], 8),
    ([(None, True), (None, False)], 8),
)


def _counts(pairs: list, threshold: float) -> tuple[int, int, int, int, int]:
    a = agreement(pairs, threshold)
    return a.true_accepts, a.false_accepts, a.true_rejects, a.false_rejects, a.unscored


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
def confusion_counts(
    confusion: Callable[[list, float], object],
    agreement_row: Callable[..., object],
    verdicts: Mapping[str, Mapping[str, Evaluation]],
    passed: Mapping[str, bool],
    threshold: float,
) -> tuple[bool, str]:
    """Build 2: the learner's confusion counts against the package's agreement, on made-up pairs and on every
    evaluator's verdicts of section 1."""
    cases = [(list(p), t) for p, t in CONFUSION_CASES] + [
        ([(ev.score, passed[k]) for k, ev in evs.items()], threshold) for evs in verdicts.values()
    ]
    reached, got = package_calls(
        lambda: [confusion(list(p), t) for p, t in cases], calibration_module
    )
    if reached:
        return False, "confusion called the package's agreement: the counts are yours to write."
    for (pairs, threshold_), counts in zip(cases, got, strict=True):
        want = _counts(pairs, threshold_)
        if not isinstance(counts, (tuple, list)) or tuple(counts) != want:
            return False, (
                f"on the pairs {pairs[:6]}{' ...' if len(pairs) > 6 else ''} at threshold {threshold_}, confusion returned "
                f"{counts!r}; expected (true accepts, false accepts, true rejects, false rejects, unscored) = {want}."
            )
    unscored = {"x": Evaluation(None, ""), "y": Evaluation(None, "")}
    for evs, truth in [
        (MADE_UP, MADE_UP_PASSED),
        (unscored, {"x": True, "y": False}),
        *((v, passed) for v in verdicts.values()),
    ]:
        a = agreement([(ev.score, truth[k]) for k, ev in evs.items()], threshold)
        want = dict(
            zip(
                ROW_KEYS,
                (
                    a.rate,
                    a.true_accepts,
                    a.false_accepts,
                    a.true_rejects,
                    a.false_rejects,
                    a.unscored,
                    sum(ev.tokens for ev in evs.values()),
                ),
                strict=True,
            )
        )
        row = agreement_row(dict(evs), truth, threshold)
        if not isinstance(row, Mapping) or set(row) != set(ROW_KEYS):
            return (
                False,
                f"agreement_row returned {row!r}: a dict with exactly the keys {', '.join(ROW_KEYS)}.",
            )
        off = numbers_off(row, want, ROW_KEYS)
        if off:
            where = (
                "made-up verdicts (one unscored)"
                if evs is MADE_UP
                else "made-up verdicts, none scored"
                if evs is unscored
                else "an evaluator's verdicts of section 1"
            )
            return False, f"on {where} agreement_row gave " + ", ".join(
                f"{k} {row[k]!r} (expected {want[k]:.4g})" for k in off
            ) + "."
    return (
        True,
        f"Your counts match the package's on {len(CONFUSION_CASES)} made-up cases and every evaluator's verdicts, and so do your rows.",
    )


ROW_KEYS = (
    "agree",
    "true accept",
    "FALSE ACCEPT",
    "true reject",
    "FALSE REJECT",
    "unscored",
    "tokens",
)


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
        Draft(i, d.code, d.score, tokens=d.tokens, passed=d.passed) for i, d in enumerate(drafts, 1)
    ]


# Made-up recorded histories, each a stop path: accepted at draft 2, converged, regressed (best is not
# the last), never scored, a recording that ends before the rule stops, and the same draft twice.
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


def _scores(history: Sequence[Draft]) -> list:
    return [d.score for d in history]


@exercise(
    "03b.4",
    hints=(
        "a loop run under a rule would have stopped at the first draft k where rule.decide_drafts(history[:k]) "
        "is not None; the drafts after k were never needed.",
        "try k = 1, 2, ... up to len(history); return (history[:k], that reason) at the first reason, and the whole "
        "history with None when no prefix stops.",
    ),
)
def cut_a_loop(
    cut: Callable[[list, StopRule], object], histories: Mapping[str, Sequence[Draft]]
) -> tuple[bool, str]:
    """Build 4: the learner's cut against the package's replay_rule on made-up histories (every stop path)
    under three rules, and on the recorded LLM-critic loops under thresholds 6 to 10."""
    cases = [(list(h), r) for h in MADE_UP_HISTORIES for r in RULES]
    cases += [
        (list(h), StopRule(threshold=t, max_iterations=3))
        for h in histories.values()
        for t in (6, 8, 10)
    ]
    reached, got = package_calls(lambda: [cut(list(h), r) for h, r in cases], calibration_module)
    if reached:
        return (
            False,
            f"cut called the package's {', '.join(sorted(reached))}: the cut is yours to write.",
        )
    for (h, rule), answer in zip(cases, got, strict=True):
        drafts, reason = replay_rule(h, rule)
        if not (isinstance(answer, (tuple, list)) and len(answer) == 2):
            return (
                False,
                f"cut returned {answer!r}: return a pair (the drafts kept, the stop reason or None).",
            )
        kept, why = answer
        if list(kept) != drafts or why is not reason:
            return False, (
                f"a history scored {_scores(h)} under threshold {rule.threshold}, max {rule.max_iterations} "
                f"iterations: cut kept {len(list(kept))} draft(s) with {why!r}; the rule stops after "
                f"{len(drafts)} with {reason!r}."
            )
    return True, (
        f"your cut matches replay_rule on {len(MADE_UP_HISTORIES)} made-up histories under {len(RULES)} rules and on "
        f"the {len(histories)} recorded loops under thresholds 6, 8 and 10."
    )


CALIBRATION_CASES: tuple[tuple[list[tuple[float | None, bool]], float], ...] = (
    # an unscored draft that passed: the base rate counts scored drafts only
    ([(10, True), (10, True), (10, False), (5, False), (1, False), (None, True)], 0.2),
    # base rate 0.5 and a score whose share is exactly the margin away: within the band
    (
        [
            (3, True),
            (3, True),
            (3, True),
            (3, False),
            (7, False),
            (7, False),
            (7, False),
            (7, True),
        ],
        0.25,
    ),
    # base rate 0.8, a score at 80%: says nothing, though far from a fifty-fifty band
    ([(9, True)] * 4 + [(9, False)] + [(4, True)] * 4 + [(4, False)], 0.2),
    # unequal groups: the base rate pools the drafts (6 of 8 pass), it is not the mean of the scores' shares
    ([(9, True)] * 6 + [(2, False)] * 2, 0.25),
    ([(None, True), (None, False)], 0.2),
    ([], 0.2),
)


def _outcomes(pairs: Sequence[tuple[float | None, bool]]) -> dict:
    out: dict = {}
    for score, passed in pairs:
        if score is not None:
            out.setdefault(score, []).append(passed)
    return out


@exercise(
    "03b.6",
    hints=(
        "outcomes_by_score groups the hidden-test verdicts by score, leaving out a score of None. says_little "
        "compares each score's share of passing drafts with the base rate: the share over every scored draft.",
        "the base rate counts only scored drafts; a share exactly `margin` away is still within it (<=); pairs with "
        "no score at all give an empty list; return the scores sorted.",
    ),
)
def calibration(
    outcomes_by_score: Callable[[list], object], says_little: Callable[..., object], pairs: list
) -> tuple[bool, str]:
    """Build 6: the learner's grouping and band against the package's uninformative_band, on made-up
    pairs and on the test critic's pairs of section 3."""
    cases = [(list(p), m) for p, m in CALIBRATION_CASES] + [(list(pairs), 0.2)]
    reached, got = package_calls(
        lambda: [(outcomes_by_score(list(p)), says_little(list(p), margin=m)) for p, m in cases],
        calibration_module,
    )
    if reached:
        return (
            False,
            f"your functions called the package's {', '.join(sorted(reached))}: the band is yours to write.",
        )
    for (p, margin), (groups, band) in zip(cases, got, strict=True):
        want = _outcomes(p)
        shown = p[:8] if len(p) <= 8 else f"the {len(p)} pairs of section 3"
        if (
            not isinstance(groups, Mapping)
            or set(groups) != set(want)
            or any(sorted(list(groups[s])) != sorted(v) for s, v in want.items())
        ):
            return False, f"on {shown} outcomes_by_score returned {groups!r}, not {want}."
        truth = uninformative_band(p, margin=margin)
        if isinstance(band, (list, tuple)) and list(band) != truth and list(band) == sorted(band):
            # a share within rounding of the margin may fall either side of it
            scored = [ok for score, ok in p if score is not None]
            base = sum(scored) / len(scored) if scored else 0.0
            edge = {
                s
                for s, oks in want.items()
                if abs(sum(oks) / len(oks) - base)
                != margin  # exactly the margin: no rounding to forgive
                and abs(abs(sum(oks) / len(oks) - base) - margin) < 1e-9
            }
            if set(band) ^ set(truth) <= edge:
                truth = list(band)
        if not isinstance(band, (list, tuple)) or list(band) != truth:
            return (
                False,
                f"on {shown} says_little(pairs, margin={margin}) returned {band!r}; the scores that say little are {truth}.",
            )
    return True, (
        f"your grouping and band match the package's uninformative_band on {len(CALIBRATION_CASES)} made-up cases and "
        f"section 3's {len(pairs)} pairs (band: {uninformative_band(pairs) or 'empty'})."
    )


KEYS = ("threshold", "avg_iterations", "pass_rate", "avg_tokens")


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
def threshold_rows(
    threshold_table: Callable[..., object], histories: Sequence[Sequence[Draft]]
) -> tuple[bool, str]:
    """Build 7: the learner's threshold table against the package's sweep."""
    cases = [
        ([list(h) for h in MADE_UP_HISTORIES], [6, 8, 10], 3),
        ([list(h) for h in MADE_UP_HISTORIES], [7, 9], 2),
        ([list(h) for h in histories], [6, 7, 8, 9, 10], 3),
    ]
    reached, got = package_calls(
        lambda: [threshold_table(h, t, max_iterations=m) for h, t, m in cases], calibration_module
    )
    if reached:
        return (
            False,
            f"threshold_table called the package's {', '.join(sorted(reached))}: the table is yours to write.",
        )
    for (hs, thresholds, m), rows in zip(cases, got, strict=True):
        want = sweep(hs, thresholds, max_iterations=m)
        where = (
            "section 2's recorded loops"
            if len(hs) != len(MADE_UP_HISTORIES)
            else (f"made-up histories scored {[_scores(h) for h in hs]}")
        )
        if not isinstance(rows, (list, tuple)) or len(rows) != len(want):
            return (
                False,
                f"on {where} threshold_table returned {rows!r}: one row (a dict) per threshold, in order.",
            )
        for row, w in zip(rows, want, strict=True):
            if not isinstance(row, Mapping) or set(KEYS) - set(row):
                return (
                    False,
                    f"a row is {row!r}: each row is a dict with the keys {', '.join(KEYS)}.",
                )
            off = numbers_off(row, w, KEYS)
            if off:
                return False, (
                    f"on {where}, max {m} iterations, threshold {w['threshold']}: "
                    + ", ".join(f"{k} {row[k]!r} (expected {w[k]:.4g})" for k in off)
                    + "."
                )
    return (
        True,
        f"your table matches the package's sweep on made-up histories and on the {len(histories)} recorded loops.",
    )


CENSUS_KEYS = ("no code", "regressed", "same draft back", "oscillating", "accepted but failing")


def _census(histories: Sequence[Sequence[Draft]], rule: StopRule) -> dict[str, int]:
    return {
        "no code": sum(not a.code.strip() for h in histories for a in h),
        "regressed": sum(replay_rule(h, rule)[1] is Stop.REGRESSED for h in histories),
        "same draft back": sum(
            a.code.strip() == b.code.strip()
            for h in histories
            for a, b in zip(h, h[1:], strict=False)
        ),
        "oscillating": sum(replay_rule(h, rule)[1] is Stop.OSCILLATING for h in histories),
        "accepted but failing": sum(
            (b := best_so_far(h)) is not None
            and b.score is not None
            and b.score >= rule.threshold
            and b.passed is False
            for h in histories
        ),
    }


CENSUS_EXTRA = (
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
)


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
def failure_census(
    census: Callable[..., object], histories: Sequence[Sequence[Draft]], rule: StopRule
) -> tuple[bool, str]:
    """Build 8: the learner's census of failure modes against the same counts made with the package's replay_rule."""
    made_up = [list(h) for h in (*MADE_UP_HISTORIES, *CENSUS_EXTRA)]
    cases = [
        (made_up, StopRule(threshold=8, max_iterations=3)),
        (made_up, StopRule(threshold=9, max_iterations=3)),
        ([list(h) for h in histories], rule),
    ]
    for hs, r in cases:
        got = census(hs, r)
        want = _census(hs, r)
        where = (
            "section 2's recorded loops"
            if hs is cases[-1][0]
            else f"made-up histories under threshold {r.threshold}"
        )
        if not isinstance(got, Mapping) or set(got) != set(CENSUS_KEYS):
            return (
                False,
                f"census returned {got!r}: a dict with exactly the keys {', '.join(CENSUS_KEYS)}.",
            )
        off = [k for k in CENSUS_KEYS if got[k] != want[k]]
        if off:
            return False, f"on {where}: " + ", ".join(
                f"{k!r} {got[k]!r} (expected {want[k]})" for k in off
            ) + "."
    return (
        True,
        "your census matches on made-up histories and on every recorded loop: "
        + ", ".join(f"{k} {v}" for k, v in _census(cases[-1][0], rule).items())
        + ".",
    )


def _summary(histories: Mapping[str, Sequence[Draft]]) -> dict:
    returned = [best_so_far(list(h)) for h in histories.values()]
    return {
        "passed": sum(bool(b.passed) for b in returned),
        "iterations": sum(len(h) for h in histories.values()) / len(histories),
        "tokens": sum(a.tokens for h in histories.values() for a in h),
        "replaced": sum(b.iteration > 1 for b in returned),
    }


MADE_UP_SUMMARY = {f"task{i}": h for i, h in enumerate(MADE_UP_HISTORIES)}


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
def loop_table(loop_summary: Callable[..., object], loops: Loops) -> tuple[bool, str]:
    """Build 5: the learner's summary of one evaluator's loops, on made-up loops and on section 2's."""
    for name, histories in [("made-up", MADE_UP_SUMMARY), *loops.items()]:
        got, want = loop_summary(dict(histories)), _summary(histories)
        if not isinstance(got, Mapping) or set(got) != set(want):
            return (
                False,
                f"loop_summary returned {got!r}: a dict with exactly the keys {', '.join(want)}.",
            )
        off = numbers_off(got, want, want)
        if off:
            where = (
                f"made-up loops scored {[_scores(h) for h in histories.values()]}"
                if name == "made-up"
                else f"the {name} loops"
            )
            return False, f"on {where}: " + ", ".join(
                f"{k} {got[k]!r} (expected {want[k]:.4g})" for k in off
            ) + "."
    return True, "your summary matches on made-up loops and on every evaluator's loops."


def _means(evaluations: Mapping[str, Evaluation], passed: Mapping[str, bool]) -> tuple:
    def mean(xs: list) -> float | None:
        return sum(xs) / len(xs) if xs else None

    ok = [ev.score for k, ev in evaluations.items() if passed[k] and ev.score is not None]
    bad = [ev.score for k, ev in evaluations.items() if not passed[k] and ev.score is not None]
    return mean(ok), mean(bad)


INFLATION_CASES = (
    (
        {
            "a": Evaluation(10, ""),
            "b": Evaluation(6, ""),
            "c": Evaluation(None, ""),
            "d": Evaluation(3, ""),
        },
        {"a": True, "b": True, "c": False, "d": False},
    ),
    ({"a": Evaluation(9, ""), "b": Evaluation(None, "")}, {"a": True, "b": False}),
)


@exercise(
    "03b.9",
    hints=(
        "split the drafts by the hidden tests' verdict, keep the scores that are not None, and average each group.",
        "return (passing mean, failing mean), in that order; a group with no score gives None, not 0 or an error.",
    ),
)
def inflation(
    mean_scores: Callable[..., object],
    verdicts: Mapping[str, Mapping[str, Evaluation]],
    passed: Mapping[str, bool],
) -> tuple[bool, str]:
    """Build 9: the learner's mean scores of passing and failing drafts, on made-up and real verdicts."""
    for evs, ps in [*INFLATION_CASES, *((v, passed) for v in verdicts.values())]:
        got, want = mean_scores(dict(evs), dict(ps)), _means(evs, ps)
        if not (isinstance(got, (tuple, list)) and len(got) == 2) or any(
            (g is None) != (w is None)
            or (w is not None and (not isinstance(g, (int, float)) or abs(g - w) > 1e-9))
            for g, w in zip(got, want, strict=True)
        ):
            shown = (
                {k: (ev.score, ps[k]) for k, ev in evs.items()}
                if len(evs) < 6
                else "an evaluator's verdicts"
            )
            return False, f"on {shown} (score, passed) mean_scores returned {got!r}, not {want}."
    return True, "your means match on made-up verdicts and on every evaluator's."


PAIRED_A = {
    "a": Evaluation(10, ""),
    "b": Evaluation(3, ""),
    "c": Evaluation(None, ""),
    "d": Evaluation(9, ""),
    "e": Evaluation(2, ""),
    "f": Evaluation(8, ""),
}
PAIRED_B = {
    "a": Evaluation(2, ""),
    "b": Evaluation(9, ""),
    "c": Evaluation(4, ""),
    "d": Evaluation(None, ""),
    "e": Evaluation(1, ""),
    "f": Evaluation(7, ""),
}
PAIRED_TRUTH = {"a": True, "b": False, "c": False, "d": False, "e": False, "f": True}


def _disagreements(
    a: Mapping[str, Evaluation],
    b: Mapping[str, Evaluation],
    truth: Mapping[str, bool],
    threshold: float,
):
    def right(evs: Mapping[str, Evaluation]) -> set[str]:
        return {
            k
            for k, ev in evs.items()
            if ev.score is not None and (ev.score >= threshold) == truth[k]
        }

    return sorted(right(a) - right(b)), sorted(right(b) - right(a))


@exercise(
    "03b.3",
    hints=(
        "first write right(evaluations): the task ids where the critic's accept (score >= threshold) matches "
        "truth[task_id]. Then the two answers are set differences, one each way.",
        "a score of None is right on nothing: neither an accept nor a reject. Return (only a right, only b right), in that order.",
    ),
)
def paired(
    disagreements: Callable[..., object],
    verdicts: Mapping[str, Mapping[str, Evaluation]],
    passed: Mapping[str, bool],
    held_out: Mapping[str, bool],
    threshold: float,
) -> tuple[bool, str]:
    """Build 3: the learner's discordant drafts of two critics, on made-up verdicts and on every pair of
    section 1's critics against all the hidden tests and against the held-out half."""
    names = list(verdicts)
    cases = [(PAIRED_A, PAIRED_B, PAIRED_TRUTH, 8, "made-up verdicts")]
    cases += [
        (verdicts[x], verdicts[y], truth, threshold, f"{x} against {y} ({label})")
        for label, truth in (("all the hidden tests", passed), ("the held-out half", held_out))
        for x in names
        for y in names
        if x != y
    ]
    for a, b, truth, t, where in cases:
        got = disagreements(dict(a), dict(b), dict(truth), t)
        want = _disagreements(a, b, truth, t)
        if not (isinstance(got, (tuple, list)) and len(got) == 2) or any(
            not isinstance(g, (list, tuple)) or list(g) != w for g, w in zip(got, want, strict=True)
        ):
            shown = ""
            if a is PAIRED_A:
                shown = " " + "; ".join(
                    f"{k}: a {a[k].score}, b {b[k].score}, passes {truth[k]}" for k in a
                )
            return (
                False,
                f"on {where}{shown} (threshold {t}) disagreements returned {got!r}; expected {want}.",
            )
    return (
        True,
        f"your disagreements match on made-up verdicts and on every pair of the {len(names)} critics, against both truths.",
    )
