"""Lesson 03b's exercise checks: the test-first critic and the confusion counts (against the package's `agreement`),
then a critic's false accepts and the loops where the refiner ran."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from reflect.judging import calibration as calibration_module
from reflect.judging.calibration import agreement
from reflect.judging.controller import Draft, best_so_far
from reflect.judging.critics import Evaluation, LLMCritic
from reflect.tasks.task import get_task
from reflect.testing import ScriptedChat

from . import exercise, package_calls

Loops = Mapping[str, Mapping[str, Sequence[Draft]]]


def _false_accepts(
    evaluations: Mapping[str, Evaluation], passed: Mapping[str, bool], threshold: float
) -> list[str]:
    """The truth exercise 1 is graded against: accepted (a score at least `threshold`), yet failing."""
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
    "03b.3",
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
    """Exercise 3: false_accepts on made-up verdicts and on every critic of section 1, then voting_false_tasks."""
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
    if not isinstance(voting_false_tasks, list) or voting_false_tasks != truth:
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
    """The truth exercise 2 is graded against: the loops with more than one attempt, by evaluator."""
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
)


@exercise(
    "03b.4",
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
    """Exercise 4: `refined` (the loops where the refiner ran) against section 2's loops, and
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
        name: list(refined[name]) if isinstance(refined[name], (list, tuple)) else refined[name]
        for name in want
    }
    if got != want:
        if got == replaced:
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
SCRIPTED_CRITIQUE = (
    '{"score": 6, "issues": ["no docstring"], "strengths": [], "suggestion": "add one"}'
)


class _ScriptedTests:
    """A tests critic that gives every draft the same score, with a failure quoted."""

    def __init__(self, score: float) -> None:
        self.score = score

    def evaluate(self, task: object, code: str) -> Evaluation:
        return Evaluation(
            self.score, "1 of 5 visible checks failed:\n- FAIL f(4): expected 3, got 2"
        )


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
    ):
        ev = combo.evaluate(task, code)
        if scripted.calls:
            return (
                False,
                f"on {label} the model was asked {len(scripted.calls)} time(s): failing tests should answer alone.",
            )
        if (
            not isinstance(ev, Evaluation)
            or ev.score is None
            or ev.score >= 10
            or "visible" not in ev.feedback
        ):
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
    ),
)
def confusion_counts(
    confusion: Callable[[list, float], object],
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
    return (
        True,
        f"Your counts match the package's on {len(CONFUSION_CASES)} made-up cases and every evaluator's verdicts.",
    )
