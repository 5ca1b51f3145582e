"""Lesson 03b's exercise checks: a critic's false accepts, the loops where the refiner ran, tests before the LLM."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from reflect.judging.controller import Draft, best_so_far
from reflect.judging.critics import Evaluation, LLMCritic
from reflect.tasks.task import get_task
from reflect.testing import ScriptedChat

from . import exercise

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
    "03b.1",
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
    """Exercise 1: false_accepts on made-up verdicts and on every critic of section 1, then voting_false_tasks."""
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
    "03b.2",
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
    """Exercise 2: `refined` (the loops where the refiner ran) against section 2's loops, and
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
    "03b.3",
    hints=(
        "call the tests critic first; only when its score is 10 (every visible test passes) ask the LLM critic.",
        "__init__ keeps both critics (a TestGroundedCritic() when no tests critic is given); evaluate returns one of "
        "their two Evaluations as it is, never a new one.",
    ),
)
def tests_then_llm(tests_then_llm_class: Callable[[LLMCritic], object]) -> tuple[bool, str]:
    """Exercise 3: the class on count_vowels with a scripted model: failing drafts make no call, a passing one one."""
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
