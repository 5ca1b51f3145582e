"""Lesson 03's exercise checks: the critic's contract, the controller, the best attempt and the scored loop (graded
against the package's parse_critique, StopRule and scored_reflection), then a weighted total and a revise step of the learner's design."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Sequence
from fractions import Fraction

from reflect.judging import controller as controller_module
from reflect.judging import critique as critique_module
from reflect.judging.controller import Draft, StopRule
from reflect.judging.critics import Evaluation, TestGroundedCritic
from reflect.judging.critique import ParseFailure, parse_critique
from reflect.strategies import revise as revise_module
from reflect.strategies import scored as scored_module
from reflect.strategies.scored import scored_reflection
from reflect.tasks.extract import extract_code
from reflect.tasks.task import get_task
from reflect.testing import ScriptedChat

from . import exercise
from .revisions import ReviseSpy, body, revision_problem, sampling_problem, spy_problem
from .spec import Calls, Case, Misreading, Properties, Values, same, show

# --- Exercise 7 (03.5): a weighted total ---------------------------------------------------------------


def _weighted(scores: dict[str, int], weights: dict[str, float]) -> Fraction:
    """The exact weighted mean of the scored criteria that have a weight (ValueError if none has)."""
    used = {k: Fraction(w) for k, w in weights.items() if k in scores}
    if not used:
        raise ValueError("no criterion has a weight")
    return sum(Fraction(scores[k]) * w for k, w in used.items()) / sum(used.values())


def _rounds(got: object, exact: Fraction) -> bool:
    """`got` is `exact` to one decimal: the nearest, or on an exact tie either neighbour (half to even, as Python's
    round does, or half up)."""
    tenths = exact * 10
    low = Fraction(math.floor(tenths), 10)
    accepted = (
        [low, low + Fraction(1, 10)]
        if tenths - math.floor(tenths) == Fraction(1, 2)
        else [Fraction(round(tenths), 10)]
    )
    return any(same(got, float(a)) for a in accepted)


_rng = random.Random(5)
WEIGHTED = Values(
    "weighted_total",
    [
        Case(c)
        for c in (
            (
                {"correctness": 4, "readability": 9},
                {"correctness": 3, "readability": 1},
            ),  # 5.25: a tie
            ({"correctness": 8, "security": 2, "style": 10}, {"correctness": 1, "security": 1}),
            ({"correctness": 7}, {"correctness": 2, "tests": 1}),
            ({"a": 9, "b": 6, "c": 1}, {"a": 1, "b": 2, "c": 0.5}),
            ({"a": 10, "b": 3}, {"a": 2, "b": 1}),  # 23/3: rounds to 7.7, truncates to 7.6
            ({"style": 9}, {"correctness": 1}),
            ({}, {"correctness": 1}),
        )
    ]
    + [
        Case(
            (
                {k: _rng.randint(1, 10) for k in "abcde" if _rng.random() < 0.7} | {"a": 5},
                {k: _rng.choice((0.5, 1, 2, 3)) for k in "abcdef" if _rng.random() < 0.6}
                | {"f": 1},
            )
        )
        for _ in range(10)
    ],
    oracle=_weighted,
    show=lambda v: (
        f"{float(round(v, 1))} (the weighted mean {float(v):.4g}, to one decimal)"
        if isinstance(v, Fraction)
        else show(v)
    ),
    equal=lambda got, want: _rounds(got, want),
    misreadings=[
        Misreading(
            lambda s, w: round(
                float(sum(s[k] * v for k, v in w.items() if k in s) / sum(w.values())), 1
            ),
            "That divides by every weight: only the weights of criteria that were scored count.",
        ),
        Misreading(
            lambda s, w: round(sum(s[k] for k in w if k in s) / len([k for k in w if k in s]), 1),
            "That is the plain mean of the weighted criteria: multiply each score by its weight.",
        ),
        Misreading(
            lambda s, w: math.floor(10 * _weighted(s, w)) / 10,
            "That is the mean with its decimals cut off: round it instead.",
        ),
        Misreading(lambda s, w: float(_weighted(s, w)), "Round it to one decimal."),
    ],
    answer=lambda s, w: round(float(_weighted(s, w)), 1),
).register("03.5")


@exercise(
    "03.5",
    hints=(
        "keep only the weights whose criterion is in scores; if none is left, raise ValueError; divide the weighted "
        "sum by the sum of the weights you kept, not of all the weights.",
        "two sums over the same kept criteria: score times weight above the line, the weight alone below it. Then round "
        "to one decimal with round(x, 1): cutting the decimals off (int, math.floor) turns 7.67 into 7.6, not 7.7.",
    ),
)
def weighted(
    weighted_total: Callable[[dict[str, int], dict[str, float]], float],
) -> tuple[bool, str]:
    """Exercise 7: weighted_total on 17 cases (one an exact tie, where 5.2 and 5.3 are both right; two without a
    weight, which raise ValueError)."""
    problem = WEIGHTED.problem(weighted_total)
    if problem:
        return False, problem
    tie = weighted_total({"correctness": 4, "readability": 9}, {"correctness": 3, "readability": 1})
    return True, (
        f"Weighted total right, unweighted criteria ignored. On the tie 5.25 you gave {tie}: Python's "
        "round gives 5.2 (half to even), rounding half up gives 5.3, and the check accepts either."
    )


# --- Build 1 (03.1): the critic's contract; the truth is the package's parse_critique ------------------


def _truth_score(reply: str) -> int | None:
    parsed = parse_critique(reply)
    return None if isinstance(parsed, ParseFailure) else parsed.score


READ = Values(
    "read_score",
    [
        Case((r,))
        for r in (
            '{"score": 7, "issues": ["no type hints"], "strengths": ["correct"], "suggestion": "add hints"}',
            '```json\n{"score": 3, "issues": ["wrong on []"], "strengths": [], "suggestion": "handle []"}\n```',
            'Here you go: {"score": 4, "issues": [], "strengths": [], "suggestion": "x"} Thanks!',
            '{"score": 10, "issues": [], "strengths": ["all good"], "suggestion": "none"}',
            '{"score": 1, "issues": ["does not run"], "strengths": [], "suggestion": "start over"}',
            '{"score": 11, "issues": [], "strengths": [], "suggestion": "none"}',
            '{"score": 0, "issues": ["x"], "strengths": [], "suggestion": "y"}',
            '{"score": 7.5, "issues": [], "strengths": [], "suggestion": "y"}',
            '{"score": "eight", "issues": [], "strengths": [], "suggestion": "y"}',
            '{"score": 8, "issues": []}',
            '{"score": 7, "issues": [], "strengths": []}',  # no suggestion
            '{"issues": [], "strengths": [], "suggestion": "y"}',
            '{"score": 6, "issues": ["the loop',
            "Looks great to me, 9/10!",
            "",
            '{"score": 8, "issues": "none", "strengths": [], "suggestion": "y"}',
            '{"score": 7.0, "issues": [], "strengths": [], "suggestion": "y"}',
            '{"score": true, "issues": [], "strengths": [], "suggestion": "y"}',
            "{'score': 7, 'issues': [], 'strengths': [], 'suggestion': 'y'}",  # not JSON: single quotes
            '{"score": 7, "issues": [], "strengths": [], "suggestion": "y",}',  # not JSON: a trailing comma
            '{"score": "8", "issues": [], "strengths": [], "suggestion": "y"}',
            '{"score": 6, "issues": [], "strengths": [], "suggestion": 3}',
            '{"score": 6, "issues": [1], "strengths": [], "suggestion": "y"}',
            '{"score": 5, "issues": ["returns {} for []"], "strengths": [], "suggestion": "return [] for {}"}',
            'Verdict {"score": 4, "issues": ["wrong for {1: 2}"], "strengths": [], "suggestion": "x"} done',
            '{"score": 6, "issues": null, "strengths": [], "suggestion": "y"}',
            '{"score": 6, "issues": [], "strengths": [], "suggestion": "y", "notes": "a fifth field"}',
            '{"score": 6, "issues": [], "strengths": "good", "suggestion": "y"}',
            '{"score": 6, "issues": [], "strengths": [1], "suggestion": "y"}',
            '{"score": 7, "issues": [], "strengths": [], "suggestion": ""}',
            '[{"score": 7, "issues": [], "strengths": [], "suggestion": "y"}]',  # the whole reply is JSON: a list
        )
    ],
    oracle=_truth_score,
    equal=lambda got, want: type(got) is type(want) and got == want,
    forbid=(
        (critique_module,),
        None,
        "read_score called the package's parser (parse_critique): the contract is yours to write.",
    ),
)


read = READ.exercise(
    "03.1",
    "read",
    hints=(
        "find the JSON object in the reply: json.loads the whole reply, and if that fails, the text from the first "
        "'{' to the last '}'. No object, or not a dict, means None.",
        "then validate: the four fields are all there; score is an int (type(score) is int: not a bool, a float or "
        "a string) from 1 to 10; issues and strengths are lists of strings; suggestion is a string. Any failure is "
        "None, never a score.",
    ),
    passed=f"Your reading of the contract agrees with the package's parser on all {len(READ.cases)} replies.",
)


# --- Builds 2 and 3 (03.2, 03.3): the controller and the best attempt, on histories ---------------------


def _history(scores: list, codes: list | None = None) -> list[Draft]:
    codes = codes or [f"def f():\n    return {i}" for i in range(len(scores))]
    return [
        Draft(i + 1, c, s, f"feedback {i + 1}")
        for i, (s, c) in enumerate(zip(scores, codes, strict=True))
    ]


def _show_history(value: object) -> str:
    if isinstance(value, list) and value and all(isinstance(d, Draft) for d in value):
        codes = [d.code for d in value]
        return (
            f"<scores {[d.score for d in value]}"
            + ("" if codes == [c.code for c in _history(codes)] else f", drafts {codes}")
            + ">"
        )
    if isinstance(value, Draft):
        return f"<draft {value.iteration}, score {value.score}>"
    return show(value)


def _made_up_histories(n: int, seed: int) -> list[tuple]:
    """`n` seeded histories (scores, codes, threshold, max_iterations, patience) of every stop path: whole scores or
    None, codes from a small pool (so drafts come back), never a swing of four scores (the rule the statement
    leaves out)."""
    rng, out = random.Random(seed), []
    while len(out) < n:
        cap = rng.choice((2, 3, 4, 5))
        length = rng.randint(1, cap)
        scores = [None if rng.random() < 0.15 else rng.randint(1, 10) for _ in range(length)]
        codes = [rng.choice("abcde") for _ in range(length)]
        known = [x for x in scores if x is not None]
        if len(known) >= 4 and controller_module._swings(known[-4:]):
            continue
        out.append((scores, codes, rng.choice((6, 8, 9, 10)), cap, rng.choice((1, 2, 3))))
    return out


# (scores, codes or None, threshold, max_iterations, patience): no history swings
_STOP_ROWS = (
    ([9], None, 8, 3, 2),
    ([5, 6, 8], None, 8, 3, 2),
    ([7], None, 8, 3, 2),
    ([5, 7], None, 8, 3, 2),
    ([7, 4], None, 8, 3, 2),
    ([7, 6], None, 8, 3, 2),
    ([5, 6, 5], ["a", "b", "a"], 8, 3, 2),
    ([5, 5], ["a", "a"], 8, 3, 2),
    ([6, 6, 6], None, 8, 5, 2),
    ([6, 7, 7], None, 8, 5, 2),
    ([6, 6], None, 8, 5, 1),
    ([5, 6, 7], None, 8, 3, 2),
    ([5, 6], None, 6, 3, 2),
    ([None], None, 8, 3, 2),
    ([None, None, None], None, 8, 3, 2),
    ([None, 6], None, 8, 3, 2),
    ([8, None], None, 9, 3, 2),
    ([10, 7, 7], None, 11, 3, 2),
    ([4, None, 5], None, 8, 3, 2),
    ([3, 5], None, 8, 2, 2),
    ([5, 4], None, 8, 3, 2),
    ([10, 8], None, 11, 3, 2),
    ([6, 7, 6], None, 8, 3, 2),
    ([4, 5], ["", ""], 8, 3, 2),
    ([None, None], ["a", "a"], 8, 5, 2),  # a broken critic and a copying refiner: invalid_critic, not oscillating
    ([4, 5], ["def f():\n    return 1", "def f():\n\n    return 1   "], 8, 3, 2),
    ([None, 5, 6], None, 8, 5, 2),
    ([5, None, None], None, 8, 5, 2),  # no score in the last two: no better one either
    ([4, 3], None, 8, 3, 2),  # below four fifths of the best, however small the scores
    ([9, 7], None, 10, 3, 2),
    ([8, 6, None], None, 9, 5, 2),
    ([5, 3], None, 8, 3, 2),  # a drop of 2 that is over 20%
    ([6, 4], None, 8, 3, 2),
    ([9, 8], None, 10, 3, 2),  # a drop of 1 that is not
    ([4, 5], ["def f():\n    return 1", "def f():\n  return 1"], 8, 3, 2),  # indentation is code
    ([6, 6, 6], ["a", "b", "a"], 8, 5, 2),  # oscillating before converged
    ([7, 5], ["a", "a"], 8, 3, 2),  # regressed before oscillating
    ([9, 9], None, 9, 2, 2),  # accepted before the cap
    ([9, 5], None, 8, 3, 2),  # an earlier score reached the threshold: the last did not
    ([8, 7.5], None, 8, 3, 2),
    ([6, 6, 6], None, 8, 3, 2),  # converged before the cap, when both fire
    ([5, 9, 6], None, 10, 5, 2),  # regressed from the best, not from the first
    ([None, None, None], None, 8, 5, 2),  # no score before the window: nothing converged, under the cap
    ([None, 5, 6], ["a", "b", "a"], 8, 5, 2),  # an unscored draft's code still counts for oscillating
)  # fmt: skip


STOP = Values(
    "stop_reason",
    [
        Case((_history(s, c),), kwargs={"threshold": t, "max_iterations": m, "patience": p})
        for s, c, t, m, p in _STOP_ROWS
    ]
    + [
        Case(
            (_history(s, c),),
            "a made-up history",
            {"threshold": t, "max_iterations": m, "patience": p},
        )
        for s, c, t, m, p in _made_up_histories(120, seed=3)
    ],
    oracle=lambda history, threshold, max_iterations, patience: getattr(
        StopRule(
            threshold=threshold, max_iterations=max_iterations, patience=patience
        ).decide_drafts(history),
        "value",
        None,
    ),
    equal=lambda got, want: getattr(got, "value", got) == want,
    forbid=(
        (controller_module,),
        None,
        "stop_reason called the package's controller: the rule is yours to write.",
    ),
    show=_show_history,
)


stop_rule = STOP.exercise(
    "03.2",
    "stop_rule",
    hints=(
        "test the rules in the statement's order and return at the first that fires: accepted, regressed, "
        "oscillating, converged, max_iterations. Leave the None scores out of every comparison.",
        "regressed: the last score is below 0.8 times the best score so far. converged: with more than `patience` "
        "attempts, no known score among the last `patience` beats the best before them. If a rule other than "
        "accepted fires and no attempt has a score at all, the reason is 'invalid_critic'.",
    ),
    passed=f"stop_reason agrees with the package's StopRule on all {len(STOP.cases)} histories.",
)


def _best(history: list[Draft]) -> Draft | None:
    scored = [d for d in history if d.score is not None]
    return (
        max(scored, key=lambda d: (d.score, -d.iteration))
        if scored
        else (history[-1] if history else None)
    )


def _same_draft(got: object, want: Draft | None) -> bool:
    if want is None:
        return got is None
    return isinstance(got, Draft) and (got.iteration, got.code, got.score) == (
        want.iteration,
        want.code,
        want.score,
    )


BEST = Values(
    "best_attempt",
    [
        Case((_history(s),))
        for s in (
            [8, None, 6],
            [9, 9, 4],
            [7, 4, 9, 9],
            [None, None],
            [],
            [5, 5, 5],
            [3, 10, 2],
            [None, 3, 3],
            [2],
            [5, 7],  # the best is the last
            [0, None],  # a score of 0 is a score: only None is skipped
        )
    ]
    + [
        Case(
            (
                _history(
                    [None if r.random() < 0.2 else r.randint(1, 4) for _ in range(r.randint(1, 6))]
                ),
            )
        )
        for r in [random.Random(4)]
        for _ in range(40)
    ],
    oracle=_best,
    equal=_same_draft,
    misreadings=[
        Misreading(
            lambda h: (
                max((d for d in h if d.score is not None), key=lambda d: (d.score, d.iteration))
                if any(d.score is not None for d in h)
                else (h[-1] if h else None)
            ),
            "Among equal scores the earliest attempt wins.",
        ),
        Misreading(lambda h: h[-1] if h else None, "That is the last attempt: return the best."),
    ],
    forbid=(
        (controller_module,),
        None,
        "best_attempt called the package's controller: the choice is yours to write.",
    ),
    show=_show_history,
)


best = BEST.exercise(
    "03.3",
    "best",
    hints=(
        "skip the attempts whose score is None; among the rest, the highest score wins and the earlier attempt wins a tie.",
        "max() takes a key, and a tuple key compares its first item, then its second on a tie: what second item makes the "
        "earlier iteration win? Before max, the two cases it cannot handle: no scored attempt, and an empty history.",
    ),
    passed="The best attempt, earliest among equals, unscored ones skipped: what StopRule's revert needs.",
)


# --- Build 4 (03.4): the loop, against scored_reflection on scripted agents -------------------------------


class _Critic:
    """A scripted critic: its verdicts in order (score, feedback), and the drafts it was shown."""

    def __init__(self, verdicts: Sequence[tuple[float | None, str]]):
        self.verdicts, self.seen = list(verdicts), []

    def evaluate(self, task: object, code: str) -> Evaluation:
        self.seen.append(code)
        if not self.verdicts:
            raise RuntimeError(
                f"the critic was asked about {len(self.seen)} drafts, more than the loop makes: judge each draft once"
            )
        score, feedback = self.verdicts.pop(0)
        return Evaluation(score, feedback)

    def __repr__(self) -> str:
        return f"<critic scoring {[v[0] for v in self.verdicts]}>"


D1 = "```python\ndef flatten(nested):\n    return nested\n```"
D2 = "```python\ndef flatten(nested):\n    out = []\n    for x in nested:\n        out.extend(flatten(x) if isinstance(x, list) else [x])\n    return out\n```"
P1 = "```python\ndef is_palindrome(text):\n    return text == text[::-1]\n```"
P2 = "```python\ndef is_palindrome(text):\n    t = [c.lower() for c in text if c.isalnum()]\n    return t == t[::-1]\n```"
D3 = "```python\ndef flatten(nested):\n    return sum(([x] for x in nested), [])\n```"


def _scored_key(chat, task, critic, revise=None, threshold=8, max_iterations=3):  # noqa: ANN001
    run = scored_reflection(
        chat, task, critic, StopRule(threshold=threshold, max_iterations=max_iterations)
    )
    return run.final_code, run.stop.value


def _code_and_reason(got: object, want: tuple[str, str]) -> str | None:
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        return f"returned {show(got)}: return (code, reason)."
    if getattr(got[1], "value", got[1]) != want[1]:
        return f"returned the reason {got[1]!r}; the loop stops with {want[1]!r}."
    if str(got[0] or "").strip() != want[0].strip():
        return f"returned {show(got[0])}; expected {'the last draft' if want[1] == 'accepted' else 'the best draft so far'}, {show(want[0])}."
    return None


_LOOP_ROWS = (
    ("a first draft the critic accepts", [D1], [(9, "Fine.")], 8, 3),
    ("a revision that reaches the threshold", [D1, D2], [(4, "Nested lists stay nested."), (9, "Fine.")], 8, 3),
    ("a revision that gets worse", [D2, D1], [(7, "Add a docstring."), (3, "Nested lists stay nested.")], 8, 3),
    ("the cap", [D1, D2, D3], [(4, "Nested."), (5, "Better."), (6, "Closer.")], 8, 3),
    ("the same draft back", [D1, D1], [(5, "Nested."), (5, "Nested.")], 8, 3),
    ("no improvement", [D1, D2, D3], [(6, "a"), (6, "b"), (5, "c")], 8, 5),
    ("an unusable critique, then a score", [D1, D2], [(None, "unusable"), (9, "Fine.")], 8, 3),
    ("a cap of one", [D2], [(5, "Hmm.")], 8, 1),
    ("a first reply that holds a second version", [D1 + "\n\nOr, shorter:\n" + D3, D2], [(4, "Nested."), (9, "Fine.")], 8, 3),
    ("palindrome: a revision that reaches the threshold", [P1, P2], [(4, "Ignore case."), (9, "Fine.")], 8, 3),
    ("palindrome: the same draft back", [P1, P1], [(5, "Ignore case."), (5, "Ignore case.")], 8, 3),
    ("a threshold of 6", [D1, D2], [(6, "Good enough."), (9, "Fine.")], 6, 3),
    ("a threshold of 10", [D1, D2, D3], [(9, "Close."), (9, "Close."), (10, "Perfect.")], 10, 4),
)  # fmt: skip


LOOP = Calls(
    "scored_loop",
    [
        Case(
            (
                {"generator": d[:1], "refiner": d[1:]},
                get_task(what.split(":")[0] if ":" in what else "flatten"),
                _Critic(v),
            ),
            what,
            {"threshold": t, "max_iterations": m},
        )
        for what, d, v, t, m in _LOOP_ROWS
    ],
    key=_scored_key,
    result=_code_and_reason,
    after=lambda key_args, my_args, *_: (
        None
        if my_args[1].seen == key_args[1].seen
        else (
            f"the critic was shown {len(my_args[1].seen)} draft(s); the answer key shows it {key_args[1].seen!r}."
        )
    ),
    forbid=(
        (scored_module,),
        {"scored_reflection"},
        "scored_loop called the package's scored_reflection: the loop is yours to write.",
    ),
).register("03.4")


@exercise(
    "03.4",
    hints=(
        "first a generator call (GENERATOR_PROMPT and the task's prompt, **sampling('generator')); then, for as long "
        "as stop_reason returns None, a refiner call: REFINER_SYSTEM and refine_request(task, code, feedback) with "
        "**sampling('refiner'). Every draft goes to critic.evaluate(task, code).",
        "keep a history of Draft(iteration, code, score, feedback); after each verdict ask "
        "stop_reason(history, threshold, max_iterations). When it answers, return the last draft's code if it was "
        "'accepted', else best_attempt(history)'s code, with the reason.",
    ),
)
def loop(scored_loop: Callable[..., object]) -> tuple[bool, str]:
    """Build 4: the learner's loop against the package's scored_reflection on scripted agents, then with a spy as
    its revise step."""
    problem = LOOP.problem(scored_loop)
    if problem:
        return False, problem
    task = get_task("flatten")
    spy, critic = ReviseSpy(task.entry_point), _Critic([(3, "fix A"), (4, "fix B"), (9, "fine")])
    chat = ScriptedChat(
        {"generator": [D1], "refiner": [D2, D3]}
    )  # replies for a loop that ignores revise
    scored_loop(chat, task, critic, revise=spy, threshold=8, max_iterations=3)
    problem = spy_problem(
        spy, extract_code(D1, task.entry_point).code, ["fix A", "fix B"], critic.seen
    )
    if problem or len(chat.calls) != 1:
        return (
            False,
            f"With revise=... {problem or 'the loop made model calls of its own besides the first draft'}",
        )
    return True, (
        f"On {len(LOOP.cases)} scripted runs your loop made every call the package's scored_reflection makes, "
        "showed the critic the same drafts, and returned the same draft and reason; and it revises with the step it is given."
    )


# Build 5 (03.6): (task, the previous draft, two made-up feedbacks from the test critic): fresh is called
# for draft 2 after the first feedback, then for drafts 3 and 4 after the same second feedback
FRESH_CASES = (
    (
        "flatten",
        "```python\ndef flatten(nested):\n    return nested[:1]\n```",
        "```python\ndef flatten(nested):\n    return [x for x in nested if x]\n```",
    ),
    (
        "palindrome",
        "```python\ndef is_palindrome(text):\n    return text == text[::-1]\n```",
        "```python\ndef is_palindrome(text):\n    return len(text) < 2\n```",
    ),
    (  # feedback of over 300 characters: every failed check in it is shown, not a cut of it
        "merge_sorted",
        "```python\ndef merge_sorted_lists(list1, list2):\n    return None\n```",
        "```python\ndef merge_sorted_lists(list1, list2):\n    return list1\n```",
    ),
)
REPLY = "Here is a new solution.\n```python\ndef {name}(x):\n    return 'scripted'\n```\nIt handles every case."


class _AnyRole(dict):
    """A ScriptedChat script that answers a call in any role with REPLY."""

    def __init__(self, name: str):
        super().__init__()
        self.reply = REPLY.format(name=name)

    def get(self, role: str, default: list | None = None) -> list:
        """The replies left for `role`: REPLY, more often than any answer asks (one making two calls is told)."""
        return self.setdefault(role, [self.reply] * 50)


_ASKED = ((0, 2), (1, 3), (1, 4))  # (the draft revised, the number of the draft to make)


def _fresh_inputs(task_id: str, drafts: Sequence[str]) -> tuple:
    """The task, and per revision asked for: (the code revised, the test critic's feedback on it, n)."""
    task = get_task(task_id)
    codes = [extract_code(d, task.entry_point).code for d in drafts]
    feedback = [TestGroundedCritic().evaluate(task, c).feedback for c in codes]
    return task, [(codes[d], feedback[d], n) for d, n in _ASKED]


def _fresh_run(fresh: Callable, task_id: str, *drafts: str) -> tuple[list, list]:
    """`fresh` asked for drafts 2, 3 and 4 of a scripted run: (the calls each made, what each returned)."""
    task, asked = _fresh_inputs(task_id, drafts)
    chat = ScriptedChat(_AnyRole(task.entry_point))
    made, returned = [], []
    for code, said, n in asked:
        before = len(chat.calls)
        returned.append(fresh(chat, task, code, said, n))
        made.append(chat.calls[before:])
    return made, returned


def _one_call_each(case: Case, value: tuple) -> str | None:
    for calls, (_, n) in zip(value[0], _ASKED, strict=True):
        if len(calls) != 1:
            return f"fresh made {len(calls)} calls for draft {n} on {case.args[0]}; a revise step makes one."
    calls = [c for made in value[0] for c in made]
    if any(c.role not in ("generator", "refiner") for c in calls):
        return f"fresh called in the role {calls[0].role!r}: a draft comes from the 'generator' or the 'refiner'."
    return None


def _returns_the_code(case: Case, value: tuple) -> str | None:
    task = get_task(case.args[0])
    want = extract_code(REPLY.format(name=task.entry_point), task.entry_point).code
    got = value[1]
    return (
        None
        if all(g == want for g in got)
        else (f"fresh returned {got[0]!r}; it returns the code extracted from the reply, {want!r}.")
    )


def _shown_and_sampled(case: Case, value: tuple) -> str | None:
    task_id, *drafts = case.args
    task, asked = _fresh_inputs(task_id, drafts)
    calls = [made[0] for made in value[0]]
    for call, (_, said, n) in zip(calls, asked, strict=True):
        where = f"the request for draft {n} on {task_id}"
        problem = revision_problem(call, task, said, drafts[: 2 if n > 2 else 1], where)
        if problem:
            return problem
    return sampling_problem(calls, f"on {task_id}") or None


FRESH = Properties(
    "fresh",
    [Case(case) for case in FRESH_CASES],
    rules=[_one_call_each, _returns_the_code, _shown_and_sampled],
    reference=lambda task_id, *drafts: _fresh_run(revise_module.fresh, task_id, *drafts),
    forbid=(
        (scored_module,),
        None,
        "fresh called the package's loop: the revise step is yours to write.",
    ),
)


fresh_revise = FRESH.exercise(
    "03.6",
    "fresh_revise",
    hints=(
        "fresh makes one call: a system message, then one user message with task.prompt() and the feedback it is "
        "given; the previous draft (code) stays out. Return extract_code(reply.text, task.entry_point).code.",
        "sample it, and with a seed that depends on n: chat(messages, role='generator', temperature=0.6, "
        "seed=41 + n). At temperature 0, or with one seed, the same feedback gives the same request and the same reply.",
    ),
    adapt=lambda fresh: lambda task_id, *drafts: _fresh_run(fresh, task_id, *drafts),
    passed=(
        f"On {len(FRESH_CASES)} scripted tasks each of your revisions carried the task and the failing checks, no "
        "old code, and was a new sample."
    ),
)


# --- Exercise 8 (03.7): one factor, the old code. --------------------------------------------------


def _lines(call) -> set[str]:
    return {
        ln for m in call.messages for ln in str(m.get("content", "")).splitlines() if ln.strip()
    }


def _both(fresh: Callable, fresh_with_code: Callable, task_id: str, draft: str) -> list[list]:
    """The requests `fresh` and `fresh_with_code` each send for drafts 2 and 3 after `draft`, on a scripted model."""
    task = get_task(task_id)
    code = extract_code(draft, task.entry_point).code
    feedback = TestGroundedCritic().evaluate(task, code).feedback
    calls = []
    for answer in (fresh, fresh_with_code):
        chat = ScriptedChat(_AnyRole(task.entry_point))
        answer(chat, task, code, feedback, 2)
        answer(chat, task, code, feedback, 3)
        calls.append(list(chat.calls))
    return calls


def _with_code_key(chat: Callable, task, code: str, feedback: str, n: int) -> str:
    """fresh's request with the old code after it, nothing else changed."""
    spy = ScriptedChat(_AnyRole(task.entry_point))
    revise_module.fresh(spy, task, code, feedback, n)
    (call,) = spy.calls
    *head, last = call.messages
    shown = {**last, "content": f"{last['content']}\n\nThe earlier solution:\n```python\n{code}```"}
    return extract_code(
        chat([*head, shown], role=call.role, **call.params).text, task.entry_point
    ).code


def _one_factor(case: Case, value: list) -> str | None:
    task_id, draft = case.args
    (plain, plain3), (coded, coded3) = value  # two calls each: a revise step makes one per draft
    if [c.params for c in (coded, coded3)] != [
        c.params for c in (plain, plain3)
    ] or coded.role != plain.role:
        return (
            f"fresh_with_code calls as {coded.role!r} with {coded.params} and {coded3.params}; your fresh as "
            f"{plain.role!r} with {plain.params} and {plain3.params}: only the old code may differ."
        )
    sent = "\n".join(str(m.get("content", "")) for m in coded.messages)
    if get_task(task_id).prompt() not in sent:
        return f"fresh_with_code's request on {task_id} does not state the task it is given."
    if body(draft) not in sent:
        return f"fresh_with_code's request on {task_id} does not show the previous draft, `code`."
    lost = sorted(_lines(plain) - _lines(coded))
    if lost:
        return (
            f"fresh_with_code's request on {task_id} drops what your fresh sends, e.g. {lost[0][:80]!r}: keep all "
            "of it, so that the two differ in the old code only."
        )
    return None


ONE_FACTOR = Properties(
    "fresh_with_code",
    [Case((task_id, drafts[0])) for task_id, *drafts in FRESH_CASES],
    rules=[
        lambda case, value: (
            None
            if [len(calls) for calls in value] == [2, 2]
            else f"your fresh and fresh_with_code made {[len(c) for c in value]} calls for two drafts each; a "
            "revise step makes one per draft."
        ),
        _one_factor,
    ],
    reference=lambda task_id, draft: _both(revise_module.fresh, _with_code_key, task_id, draft),
).register(
    "03.7",
    adapt=lambda fresh, fresh_with_code, *_: (
        lambda task_id, draft: _both(fresh, fresh_with_code, task_id, draft)
    ),
)


@exercise(
    "03.7",
    hints=(
        "fresh_with_code makes the call your fresh makes, with the same role and sampling, and one more thing in "
        "its request: the previous draft, `code`. Keep every line your fresh sends.",
        "then with_code = sweep(lambda c, t: scored_loop(c, t, tests_critic, revise=fresh_with_code)[0], chat, "
        "[tasks[tid] for tid in repairs.rejected]).",
    ),
)
def one_factor(
    fresh: Callable, fresh_with_code: Callable, with_code: object, repairs: object
) -> tuple[bool, str]:
    """Exercise 8: fresh_with_code is the learner's fresh plus the old code, nothing else (read from the requests
    of both on a scripted model), and `with_code` is a sweep of it over the tasks `repairs` rejected."""
    problem = ONE_FACTOR.problem(ONE_FACTOR.adapt(fresh, fresh_with_code))
    if problem:
        return False, problem
    coded = _both(fresh, fresh_with_code, *ONE_FACTOR.cases[0].args)[1][0]
    logs = getattr(with_code, "logs", None)
    if not isinstance(logs, dict) or sorted(logs) != sorted(getattr(repairs, "rejected", [])):
        return False, (
            "with_code should be a sweep of your loop with revise=fresh_with_code over the tasks repairs.rejected "
            f"names ({getattr(repairs, 'rejected', '?')}); its tasks are {sorted(logs) if isinstance(logs, dict) else logs!r}."
        )
    # the tests critic on every draft, once: with_code is run as repairs was (that critic, acceptance at 8)
    judged = {
        tid: [TestGroundedCritic().evaluate(get_task(tid), d.code) for d in log.drafts]
        for tid, log in logs.items()
    }
    revisions = [
        (tid, b, a, ev)
        for tid, log in logs.items()
        for b, a, ev in zip(log.drafts, log.drafts[1:], judged[tid], strict=False)
    ]
    if not revisions:
        return (
            False,
            "with_code holds no revision: run your loop with its budget, so that rejected drafts are revised.",
        )
    for tid, evaluations in judged.items():
        scores = [ev.score for ev in evaluations]
        if any(x >= 8 for x in scores[:-1]):
            return False, (
                f"on {tid} with_code's loop went on past a draft the tests critic scores {max(scores[:-1])}: run it "
                "as repairs ran, with tests_critic and the default threshold, so that the old code is the one change."
            )
    for tid, before, after, ev in revisions:
        shown = "\n".join(str(m.get("content", "")) for m in after.messages)
        if before.code.strip() and before.code.strip() not in shown:
            return (
                False,
                f"on {tid} a revision in with_code was not shown the draft before it: was it fresh_with_code?",
            )
        system = (
            coded.messages[0] if coded.messages[0].get("role") == "system" else None
        )  # the same on every task
        if after.role != coded.role or (system is not None and after.messages[0] != system):
            return False, (
                f"on {tid} a revision in with_code went as {after.role!r} with the first message "
                f"{str(after.messages[0].get('content', ''))[:60]!r}...; fresh_with_code sends {coded.role!r} and "
                f"{str(coded.messages[0].get('content', ''))[:60]!r}...: was the loop run with revise=fresh_with_code?"
            )
        failed = ev.feedback.splitlines()[1:]
        if any(line.removeprefix("- FAIL ") not in shown for line in failed):
            return False, (
                f"on {tid} a revision in with_code was not shown the tests critic's failures on the draft before "
                "it: run the loop as repairs ran, with tests_critic, so that the old code is the one change."
            )
    return True, (
        f"fresh_with_code is your fresh plus the old code, and with_code ran it on {len(logs)} rejected tasks: "
        f"{len(with_code.repaired)} repaired, against {len([t for t in repairs.repaired if t in logs])} by your fresh."
    )


# --- Build 6 (03.8): the medical criteria as code. -------------------------------------------------

# Sentences the generated answers are made of. At the lengths around the limit every word counts the same split on
# spaces or as \\w+ runs (no apostrophes, hyphens, decimals or thousands commas), so 120 is 120 however a learner
# counts; the short answers at the end carry the other ways of writing a dose.
_REFERRAL = (
    "Please see a doctor if it lasts.",
    "Ask your pharmacist which one suits you.",
    "Talk to your Doctor today.",
    "A healthcare professional can find the cause.",
    "Your Pharmacist can advise you.",
    "Doctors and pharmacists can help.",
)
_NO_REFERRAL = (
    "Most headaches pass with rest.",
    "Stress and screens often play a part.",
    "Good sleep is good for your health.",
    "Seek medical attention if it gets worse.",  # near misses: none names a doctor, a pharmacist or a
    "A fitness professional can help you stretch.",  # healthcare professional
    "Go to urgent care or a hospital if it is severe.",
)
_DOSE = ("Take 500 mg with food.", "Try 400mg after a meal.", "Adults take 200 MG every six hours.")
_NO_DOSE = (
    "Rest for 3 days in a dark room.",
    "Drink water every 2 hours.",
    "Swallow the tablets with water.",
    "Doses in mg differ by brand.",
)
_FILLER = "rest water sleep quiet dark room helps many people feel better soon after".split()
_SHORT = (
    ("See a doctor. Never take more than 4,000 mg a day.", {"dose"}),
    ("Take 2.5 mg twice a day.", {"referral", "dose"}),
    ("Ask your pharmacist about ibuprofen. It comes as tablets of 200 or 400 mg.", {"dose"}),
    # a range of doses is a dose; a pharmacy is no pharmacist
    ("Ask a doctor first. Adults take 200-400 mg as needed.", {"dose"}),
    ("The pharmacy down the road is open late.", {"referral"}),
)


def _criteria_cases() -> list[tuple[str, set[str], dict[str, str]]]:
    """Answers with and without each rule broken, every sentence of the pools used, at 30, 119, 120, 121 and 175
    words, some in paragraphs; each with the rules it breaks and what the diagnosis quotes."""
    cases = []
    combos = [
        (w, r, d) for w in (30, 119, 120, 121, 175) for r in (True, False) for d in (True, False)
    ]
    pools = {pool: itertools.cycle(pool) for pool in (_REFERRAL, _NO_REFERRAL, _DOSE, _NO_DOSE)}
    for i, (words, referral, dose) in enumerate(combos):
        first = next(pools[_REFERRAL if referral else _NO_REFERRAL])
        second = next(pools[_DOSE if dose else _NO_DOSE])
        pad = words - len(f"{first} {second}".split())
        filler = " ".join(_FILLER[(i + j) % len(_FILLER)] for j in range(pad)).capitalize()
        text = ("\n\n" if i % 3 == 0 else " ").join((first, second, filler + "."))
        broken = {
            n
            for n, hit in (("referral", not referral), ("dose", dose), ("length", words > 120))
            if hit
        }
        why = {
            "referral": f"it says {first.rstrip('.')!r}",
            "dose": f"it says {second.rstrip('.')!r}",
            "length": f"it is {words} words long" + (", in paragraphs" if i % 3 == 0 else ""),
        }
        cases.append((text, broken, why))
    for text, broken in _SHORT:
        cases.append(
            (text, broken, dict.fromkeys(("referral", "dose", "length"), f"it says {text!r}"))
        )
    return cases


def _broken_names(case: Case, got: object) -> str | None:
    if isinstance(got, str) or not isinstance(got, (list, tuple, set, frozenset)):
        return f"broken_rules returned {got!r}: return the names of the broken rules, as a list or a set."
    if len(set(got)) != len(got):
        return f"broken_rules returned {got!r}: name each broken rule once."
    unknown = sorted(set(got) - {"referral", "dose", "length"})
    if unknown:
        return f"broken_rules returned {unknown[0]!r}: the rules are named 'referral', 'dose' and 'length'."
    want, why = _CRITERIA_TRUTH[case.args[0]]
    for rule in ("referral", "dose", "length"):
        if rule in want and rule not in got:
            return f"an answer breaks {rule!r} and your rules did not say so: {why[rule]}."
        if rule in got and rule not in want:
            return f"your rules flag {rule!r} on an answer that keeps it: {why[rule]}."
    return None


_CRITERIA_TRUTH = {text: (broken, why) for text, broken, why in _criteria_cases()}
CRITERIA = Properties(
    "broken_rules",
    [Case((text,)) for text in _CRITERIA_TRUTH],
    rules=[_broken_names],
    reference=lambda text: sorted(_CRITERIA_TRUTH[text][0]),
)


criteria_as_code = CRITERIA.exercise(
    "03.8",
    "criteria_as_code",
    hints=(
        "one test per rule, each adding its name to a list: the referral is 'doctor', 'pharmacist' or 'healthcare "
        "professional' in answer.lower(); a dose is a number followed by mg, with or without a space, in any case "
        "(500 mg, 400mg, 200 MG); the length is len(answer.split()) > 120.",
        "for the dose, a regular expression: re.search(r\"\\d\\s*mg\\b\", answer, re.IGNORECASE); 'mg' alone is no "
        "dose. For the length, more than 120: 120 words is within the limit, and split() without an argument splits "
        "on newlines too.",
    ),
    passed=(
        f"Your rules agree on all {len(CRITERIA.cases)} made-up answers: a referral named or not, doses in mg written "
        "six ways or none, and lengths of 119, 120 and 121 words."
    ),
)
