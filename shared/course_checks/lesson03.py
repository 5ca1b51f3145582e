"""Lesson 03's exercise checks: the critic's contract, the controller, the best attempt and the scored loop (graded
against the package's parse_critique, StopRule and scored_reflection), then a weighted total and a revise step of the learner's design."""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

from reflect.judging import controller as controller_module
from reflect.judging import critique as critique_module
from reflect.judging.controller import Draft, StopRule
from reflect.judging.critics import Evaluation, TestGroundedCritic
from reflect.judging.critique import ParseFailure, parse_critique
from reflect.records import Stop
from reflect.strategies import scored as scored_module
from reflect.strategies.scored import scored_reflection
from reflect.tasks.extract import extract_code
from reflect.tasks.task import get_task
from reflect.testing import ScriptedChat

from . import exercise, package_calls
from .revisions import ReviseSpy, body, revision_problem, sampling_problem, spy_problem

# (scores, weights): the first one's weighted mean is 5.25, a tie at one decimal
WEIGHTED_CASES = [
    ({"correctness": 4, "readability": 9}, {"correctness": 3, "readability": 1}),
    ({"correctness": 8, "security": 2, "style": 10}, {"correctness": 1, "security": 1}),
    ({"correctness": 7}, {"correctness": 2, "tests": 1}),
    ({"a": 9, "b": 6, "c": 1}, {"a": 1, "b": 2, "c": 0.5}),
    ({"a": 10, "b": 3}, {"a": 2, "b": 1}),  # 23/3 = 7.67: rounds to 7.7, truncates to 7.6
]
NO_WEIGHT_CASES = [({"style": 9}, {"correctness": 1}), ({}, {"correctness": 1})]


def _accepted_totals(
    scores: Mapping[str, int], weights: Mapping[str, float]
) -> tuple[Fraction, list[Fraction]]:
    """The exact weighted mean and the one-decimal values a right answer may give: on an exact tie
    both neighbours (half to even, as Python's round does, and half up), else the nearest."""
    used = {k: Fraction(w) for k, w in weights.items() if k in scores}
    exact = sum(Fraction(scores[k]) * w for k, w in used.items()) / sum(used.values())
    tenths = exact * 10
    low = Fraction(math.floor(tenths), 10)
    if tenths - math.floor(tenths) == Fraction(1, 2):
        return exact, [low, low + Fraction(1, 10)]
    return exact, [Fraction(round(tenths), 10)]


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
    """Exercise 7: weighted_total on five cases (one an exact tie, where 5.2 and 5.3 are both right) and two without a weight."""
    tie = None
    for scores, weights in WEIGHTED_CASES:
        exact, accepted = _accepted_totals(scores, weights)
        got = weighted_total(dict(scores), dict(weights))
        if isinstance(got, bool) or not isinstance(got, (int, float)):
            return False, f"weighted_total({scores}, {weights}) returned {got!r}, not a number."
        if not any(abs(got - float(a)) < 1e-9 for a in accepted):
            want = " or ".join(f"{float(a):.1f}" for a in accepted)
            cut = abs(got - math.floor(exact * 10) / 10) < 1e-9 and len(accepted) == 1
            why = (
                " That is the mean with its decimals cut off: round it instead."
                if cut
                else " Only criteria that have a weight count, and only weights whose criterion was scored."
            )
            return False, (
                f"weighted_total({scores}, {weights}) returned {got!r}; expected {want} (the weighted mean "
                f"{float(exact):.4g}, rounded to one decimal).{why}"
            )
        if len(accepted) == 2:
            tie = (float(exact), got)
    for scores, weights in NO_WEIGHT_CASES:
        try:
            got = weighted_total(dict(scores), dict(weights))
        except ValueError:
            continue
        return (
            False,
            f"weighted_total({scores}, {weights}) returned {got!r}: no criterion has a weight, so raise ValueError.",
        )
    return True, (
        f"Weighted total right, unweighted criteria ignored. On the tie {tie[0]} you gave {tie[1]}: Python's "
        "round gives 5.2 (half to even), rounding half up gives 5.3, and the check accepts either."
    )


# --- The builds: the critic's contract, the controller, the best attempt, the loop. -------------

# Critic replies (03.1); the truth is the package's parse_critique: its score, or None.
REPLIES: tuple[str, ...] = (
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
    '{"issues": [], "strengths": [], "suggestion": "y"}',
    '{"score": 6, "issues": ["the loop',
    "Looks great to me, 9/10!",
    "",
    '{"score": 8, "issues": "none", "strengths": [], "suggestion": "y"}',
    '{"score": 7.0, "issues": [], "strengths": [], "suggestion": "y"}',
    '{"score": true, "issues": [], "strengths": [], "suggestion": "y"}',
    '{"score": "8", "issues": [], "strengths": [], "suggestion": "y"}',
    '{"score": 6, "issues": [], "strengths": [], "suggestion": 3}',
    '{"score": 6, "issues": [1], "strengths": [], "suggestion": "y"}',
)


def _truth_score(reply: str) -> int | None:
    parsed = parse_critique(reply)
    return None if isinstance(parsed, ParseFailure) else parsed.score


@exercise(
    "03.1",
    hints=(
        "find the JSON object in the reply: json.loads the whole reply, and if that fails, the text from the first "
        "'{' to the last '}'. No object, or not a dict, means None.",
        "then validate: the four fields are all there; score is an int (type(score) is int: not a bool, a float or "
        "a string) from 1 to 10; issues and strengths are lists of strings; suggestion is a string. Any failure is "
        "None, never a score.",
    ),
)
def read(read_score: Callable[[str], object]) -> tuple[bool, str]:
    """Exercise 1: the learner's reading of critic replies against the package's parse_critique."""
    reached, got = package_calls(lambda: [read_score(r) for r in REPLIES], critique_module)
    if reached:
        return (
            False,
            "read_score called the package's parser (parse_critique): the contract is yours to write.",
        )
    for reply, score in zip(REPLIES, got, strict=True):
        want = _truth_score(reply)
        if (
            isinstance(score, bool)
            or score != want
            or (score is not None and not isinstance(score, int))
        ):
            return False, f"read_score({reply!r}) returned {score!r}; the contract gives {want!r}."
    return (
        True,
        f"Your reading of the contract agrees with the package's parser on all {len(REPLIES)} replies.",
    )


# The controller (03.2): (scores, codes or None, threshold, max_iterations, patience); the truth is
# StopRule's decision. No history is longer than four attempts with a cap of three, and none swings.
STOP_CASES: tuple[tuple[list, list | None, int, int, int], ...] = (
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
    ([4, 5], ["def f():\n    return 1", "def f():\n\n    return 1   "], 8, 3, 2),
    ([None, 5, 6], None, 8, 5, 2),
    ([8, 6, None], None, 9, 5, 2),
)


def _history(scores: list, codes: list | None) -> list[Draft]:
    codes = codes or [f"def f():\n    return {i}" for i in range(len(scores))]
    return [
        Draft(i + 1, c, s, f"feedback {i + 1}")
        for i, (s, c) in enumerate(zip(scores, codes, strict=True))
    ]


def _truth_stop(
    scores: list, codes: list | None, threshold: int, cap: int, patience: int
) -> str | None:
    rule = StopRule(threshold=threshold, max_iterations=cap, patience=patience)
    stop = rule.decide_drafts(_history(scores, codes))
    return None if stop is None else stop.value


@exercise(
    "03.2",
    hints=(
        "test the rules in the statement's order and return at the first that fires: accepted, regressed, "
        "oscillating, converged, max_iterations. Leave the None scores out of every comparison.",
        "regressed: the last score is below 0.8 times the best score so far. converged: with more than `patience` "
        "attempts, no known score among the last `patience` beats the best before them. If a rule other than "
        "accepted fires and no attempt has a score at all, the reason is 'invalid_critic'.",
    ),
)
def stop_rule(stop_reason: Callable[..., object]) -> tuple[bool, str]:
    """Exercise 2: the learner's controller against StopRule on twenty histories."""
    calls = [
        (
            lambda s=s, c=c, t=t, m=m, p=p: stop_reason(
                _history(s, c), threshold=t, max_iterations=m, patience=p
            )
        )
        for s, c, t, m, p in STOP_CASES
    ]
    reached, got = package_calls(lambda: [call() for call in calls], controller_module)
    reached = {name for name in reached if not name.startswith(("<", "_"))}
    if reached:
        return (
            False,
            f"stop_reason called the package's controller ({', '.join(sorted(reached))}): the rule is yours to write.",
        )
    for (scores, codes, threshold, cap, patience), reason in zip(STOP_CASES, got, strict=True):
        reason = getattr(reason, "value", reason)
        want = _truth_stop(scores, codes, threshold, cap, patience)
        if reason != want:
            drafts = f", drafts {codes}" if codes else ""
            return False, (
                f"on scores {scores}{drafts} (threshold={threshold}, max_iterations={cap}, patience={patience}) "
                f"stop_reason returned {reason!r}; the controller says {want!r}."
            )
    return (
        True,
        f"stop_reason agrees with the package's StopRule on all {len(STOP_CASES)} histories.",
    )


BEST_CASES = [
    ([7, 4, 9, 9], 3),
    ([8, None, 6], 1),
    ([None, None], 2),
    ([], None),
    ([5, 5, 5], 1),
    ([3, 10, 2], 2),
]


@exercise(
    "03.3",
    hints=(
        "skip the attempts whose score is None; among the rest, the highest score wins and the earlier attempt wins a tie.",
        "max() takes a key, and a tuple key compares its first item, then its second on a tie: what second item makes the "
        "earlier iteration win? Before max, the two cases it cannot handle: no scored attempt, and an empty history.",
    ),
)
def best(best_attempt: Callable[[list[Draft]], Draft | None]) -> tuple[bool, str]:
    """Exercise 3: best_attempt on six histories; it must return one of the attempts it was given."""
    got, want = [], [w for _, w in BEST_CASES]
    for scores, _ in BEST_CASES:
        history = [Draft(i + 1, f"def f():\n    return {i}", s) for i, s in enumerate(scores)]
        reached, chosen = package_calls(lambda h=history: best_attempt(list(h)), controller_module)
        if reached:
            return (
                False,
                "best_attempt called the package's controller (best_so_far): the choice is yours to write.",
            )
        if chosen is not None and not any(chosen is a for a in history):
            return (
                False,
                f"on scores {scores} best_attempt returned {chosen!r}, not one of the attempts in the history.",
            )
        got.append(None if chosen is None else chosen.iteration)
    if got != want:
        return False, (
            f"for scores {[s for s, _ in BEST_CASES]} expected the iterations {want}, got {got}. "
            "Skip the attempts whose score is None; what if none is left, or the history is empty?"
        )
    return (
        True,
        "The best attempt, earliest among equals, unscored ones skipped: what StopRule's revert needs.",
    )


class _Critic:
    """A scripted critic: its verdicts in order (score, feedback), and the drafts it was shown."""

    def __init__(self, verdicts: Sequence[tuple[float | None, str]]):
        self.verdicts, self.seen = list(verdicts), []

    def evaluate(self, task: object, code: str) -> Evaluation:
        self.seen.append(code)
        score, feedback = self.verdicts.pop(0)
        return Evaluation(score, feedback)


D1 = "```python\ndef flatten(nested):\n    return nested\n```"
D2 = "```python\ndef flatten(nested):\n    out = []\n    for x in nested:\n        out.extend(flatten(x) if isinstance(x, list) else [x])\n    return out\n```"
D3 = "```python\ndef flatten(nested):\n    return sum(([x] for x in nested), [])\n```"

# The loop (03.4): (what, drafts the generator then the refiner write, the critic's verdicts, threshold, cap)
LOOP_TASK = "flatten"  # the scripted runs of the loop check
LOOP_CASES: tuple[tuple[str, list[str], list[tuple[float | None, str]], int, int], ...] = (
    ("a first draft the critic accepts", [D1], [(9, "Fine.")], 8, 3),
    (
        "a revision that reaches the threshold",
        [D1, D2],
        [(4, "Nested lists stay nested."), (9, "Fine.")],
        8,
        3,
    ),
    (
        "a revision that gets worse",
        [D2, D1],
        [(7, "Add a docstring."), (3, "Nested lists stay nested.")],
        8,
        3,
    ),
    ("the cap", [D1, D2, D3], [(4, "Nested."), (5, "Better."), (6, "Closer.")], 8, 3),
    ("the same draft back", [D1, D1], [(5, "Nested."), (5, "Nested.")], 8, 3),
    ("no improvement", [D1, D2, D3], [(6, "a"), (6, "b"), (5, "c")], 8, 5),
    ("an unusable critique, then a score", [D1, D2], [(None, "unusable"), (9, "Fine.")], 8, 3),
    ("a cap of one", [D2], [(5, "Hmm.")], 8, 1),
    ("a threshold of 6", [D1, D2], [(6, "Good enough."), (9, "Fine.")], 6, 3),
    ("a threshold of 10", [D1, D2, D3], [(9, "Close."), (9, "Close."), (10, "Perfect.")], 10, 4),
)


def _package_scored(chat: ScriptedChat, critic: _Critic, threshold: int, cap: int):
    task = get_task(LOOP_TASK)
    return scored_reflection(chat, task, critic, StopRule(threshold=threshold, max_iterations=cap))


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
    """Exercise 4: the learner's loop against the package's scored_reflection on scripted agents."""
    task = get_task(LOOP_TASK)
    for what, drafts, verdicts, threshold, cap in LOOP_CASES:
        script = {"generator": drafts[:1], "refiner": list(drafts[1:])}
        ours, theirs = ScriptedChat(copy.deepcopy(script)), ScriptedChat(copy.deepcopy(script))
        our_critic, their_critic = _Critic(verdicts), _Critic(verdicts)
        run = _package_scored(ours, our_critic, threshold, cap)
        reached, got = package_calls(
            lambda theirs=theirs, c=their_critic, t=threshold, m=cap: scored_loop(
                theirs, task, c, threshold=t, max_iterations=m
            ),
            scored_module,
        )
        if reached:
            return (
                False,
                "scored_loop called the package's scored_reflection: the loop is yours to write.",
            )
        sent, want = (
            [(c.role, c.messages, c.params) for c in theirs.calls],
            [(c.role, c.messages, c.params) for c in ours.calls],
        )
        where = f"On scripted agents ({what})"
        for n, (g, w) in enumerate(zip(sent, want, strict=False), 1):
            if g != w:
                return False, f"{where}: call {n} differs: expected {_call(w)}, got {_call(g)}."
        if len(sent) != len(want):
            return (
                False,
                f"{where}: your loop made {len(sent)} call(s); the loop makes {len(want)}: {[w[0] for w in want]}.",
            )
        if their_critic.seen != our_critic.seen:
            return (
                False,
                f"{where}: the critic was shown {len(their_critic.seen)} draft(s); expected {our_critic.seen!r}.",
            )
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return False, f"{where}: returned {got!r}: return (code, reason)."
        code, reason = got
        reason = getattr(reason, "value", reason)
        if reason != run.stop.value:
            return (
                False,
                f"{where}: returned the reason {reason!r}; the loop stops with {run.stop.value!r}.",
            )
        if (code or "").strip() != run.final_code.strip():
            chosen = "the last draft" if run.stop is Stop.ACCEPTED else "the best draft so far"
            return False, f"{where}: returned {code!r}; expected {chosen}, {run.final_code!r}."
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
        f"On {len(LOOP_CASES)} scripted runs your loop made every call the package's scored_reflection makes, "
        "showed the critic the same drafts, and returned the same draft and reason; and it revises with the step it is given."
    )


def _call(call: tuple) -> str:
    role, messages, params = call
    last = " ".join(str(messages[-1].get("content", "")).split())[:60] if messages else ""
    return f"role={role!r}, {len(messages)} message(s) ending {last!r}..., params={params}"


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
)
REPLY = "Here is a new solution.\n```python\ndef {name}(x):\n    return 'scripted'\n```\nIt handles every case."


class _AnyRole(dict):
    """A ScriptedChat script that answers a call in any role with REPLY."""

    def __init__(self, name: str):
        super().__init__()
        self.reply = REPLY.format(name=name)

    def get(self, role: str, default: list | None = None) -> list:
        """The replies left for `role`: REPLY, as often as asked."""
        return self.setdefault(role, [self.reply] * 5)


def _fresh_problem(fresh: Callable, case: tuple) -> str:
    task_id, *drafts = case
    task = get_task(task_id)
    codes = [extract_code(d, task.entry_point).code for d in drafts]
    feedback = [TestGroundedCritic().evaluate(task, c).feedback for c in codes]
    chat = ScriptedChat(_AnyRole(task.entry_point))
    asked = [(codes[0], feedback[0], 2), (codes[1], feedback[1], 3), (codes[1], feedback[1], 4)]
    got = []
    for code, said, n in asked:
        before = len(chat.calls)
        reached, new = package_calls(
            lambda c=code, f=said, n=n: fresh(chat, task, c, f, n), scored_module
        )
        if reached:
            return "fresh called the package's loop: the revise step is yours to write."
        if len(chat.calls) - before != 1:
            return f"fresh made {len(chat.calls) - before} calls for draft {n} on {task_id}; a revise step makes one."
        got.append(new)
    if any(c.role not in ("generator", "refiner") for c in chat.calls):
        return f"fresh called in the role {chat.calls[0].role!r}: a draft comes from the 'generator' or the 'refiner'."
    want = extract_code(chat.scripts[chat.calls[0].role][0], task.entry_point).code
    if any(g != want for g in got):
        return f"fresh returned {got[0]!r}; it returns the code extracted from the reply, {want!r}."
    for call, (_, said, n) in zip(chat.calls, asked, strict=True):
        problem = revision_problem(
            call, task, said, drafts[: 2 if n > 2 else 1], f"the request for draft {n} on {task_id}"
        )
        if problem:
            return problem
    return sampling_problem(chat.calls, f"on {task_id}")


@exercise(
    "03.6",
    hints=(
        "fresh makes one call: a system message, then one user message with task.prompt() and the feedback it is "
        "given; the previous draft (code) stays out. Return extract_code(reply.text, task.entry_point).code.",
        "sample it, and with a seed that depends on n: chat(messages, role='generator', temperature=0.6, "
        "seed=41 + n). At temperature 0, or with one seed, the same feedback gives the same request and the same reply.",
    ),
)
def fresh_revise(fresh: Callable) -> tuple[bool, str]:
    """Build 5: a revise step that is a new sample, shown the feedback and not the old code; graded by the
    requests it sends on a scripted model, on two tasks."""
    for case in FRESH_CASES:
        problem = _fresh_problem(fresh, case)
        if problem:
            return False, problem
    return True, (
        "On 2 scripted tasks each of your revisions carried the task and the failing checks, no old code, and "
        "was a new sample."
    )


# --- Exercise 8 (03.7): one factor, the old code. --------------------------------------------------


def _lines(call) -> set[str]:
    return {
        ln for m in call.messages for ln in str(m.get("content", "")).splitlines() if ln.strip()
    }


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
    for task_id, *drafts in FRESH_CASES:
        task = get_task(task_id)
        code = extract_code(drafts[0], task.entry_point).code
        feedback = TestGroundedCritic().evaluate(task, code).feedback
        calls = []
        for answer in (fresh, fresh_with_code):
            chat = ScriptedChat(_AnyRole(task.entry_point))
            answer(chat, task, code, feedback, 2)
            answer(chat, task, code, feedback, 3)
            if len(chat.calls) != 2:
                return (
                    False,
                    f"{answer.__name__} made {len(chat.calls)} calls for two drafts; a revise step makes one each.",
                )
            calls.append(chat.calls)
        (plain, plain3), (coded, coded3) = calls
        if coded3.params != plain3.params:
            return False, (
                f"for draft 3 fresh_with_code samples with {coded3.params}, your fresh with {plain3.params}: "
                "only the old code may differ."
            )
        if (coded.role, coded.params) != (plain.role, plain.params):
            return False, (
                f"fresh_with_code calls as {coded.role!r} with {coded.params}; your fresh as {plain.role!r} with "
                f"{plain.params}: only the old code may differ."
            )
        if body(drafts[0]) not in "\n".join(str(m.get("content", "")) for m in coded.messages):
            return (
                False,
                f"fresh_with_code's request on {task_id} does not show the previous draft, `code`.",
            )
        lost = sorted(_lines(plain) - _lines(coded))
        if lost:
            return False, (
                f"fresh_with_code's request on {task_id} drops what your fresh sends, e.g. {lost[0][:80]!r}: keep all "
                "of it, so that the two differ in the old code only."
            )
    logs = getattr(with_code, "logs", None)
    if not isinstance(logs, dict) or sorted(logs) != sorted(getattr(repairs, "rejected", [])):
        return False, (
            "with_code should be a sweep of your loop with revise=fresh_with_code over the tasks repairs.rejected "
            f"names ({getattr(repairs, 'rejected', '?')}); its tasks are {sorted(logs) if isinstance(logs, dict) else logs!r}."
        )
    revisions = [
        (tid, b, a)
        for tid, log in logs.items()
        for b, a in zip(log.drafts, log.drafts[1:], strict=False)
    ]
    if not revisions:
        return (
            False,
            "with_code holds no revision: run your loop with its budget, so that rejected drafts are revised.",
        )
    for tid, before, after in revisions:
        shown = "\n".join(str(m.get("content", "")) for m in after.messages)
        if before.code.strip() and before.code.strip() not in shown:
            return (
                False,
                f"on {tid} a revision in with_code was not shown the draft before it: was it fresh_with_code?",
            )
        if after.role != coded.role or after.messages[0] != coded.messages[0]:
            return False, (
                f"on {tid} a revision in with_code went as {after.role!r} with the first message "
                f"{str(after.messages[0].get('content', ''))[:60]!r}...; fresh_with_code sends {coded.role!r} and "
                f"{str(coded.messages[0].get('content', ''))[:60]!r}...: was the loop run with revise=fresh_with_code?"
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
)
_NO_REFERRAL = (
    "Most headaches pass with rest.",
    "Stress and screens often play a part.",
    "Good sleep is good for your health.",
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


@exercise(
    "03.8",
    hints=(
        "one test per rule, each adding its name to a list: the referral is 'doctor', 'pharmacist' or 'healthcare "
        "professional' in answer.lower(); a dose is a number followed by mg, with or without a space, in any case "
        "(500 mg, 400mg, 200 MG); the length is len(answer.split()) > 120.",
        "for the dose, a regular expression: re.search(r\"\\d\\s*mg\\b\", answer, re.IGNORECASE); 'mg' alone is no "
        "dose. For the length, more than 120: 120 words is within the limit, and split() without an argument splits "
        "on newlines too.",
    ),
)
def criteria_as_code(broken_rules: Callable[[str], object]) -> tuple[bool, str]:
    """Build 6: the learner's rules on answers made up from sentences with and without a referral or a dose in mg,
    at lengths around the 120-word limit; any way of detecting them that gets every case right passes."""
    cases = _criteria_cases()
    for text, want, why in cases:
        got = broken_rules(text)
        if isinstance(got, str) or not isinstance(got, (list, tuple, set, frozenset)):
            return (
                False,
                f"broken_rules returned {got!r}: return the names of the broken rules, as a list or a set.",
            )
        if len(set(got)) != len(got):
            return False, f"broken_rules returned {got!r}: name each broken rule once."
        unknown = sorted(set(got) - {"referral", "dose", "length"})
        if unknown:
            return (
                False,
                f"broken_rules returned {unknown[0]!r}: the rules are named 'referral', 'dose' and 'length'.",
            )
        for rule in ("referral", "dose", "length"):
            if rule in want and rule not in got:
                return (
                    False,
                    f"an answer breaks {rule!r} and your rules did not say so: {why[rule]}.",
                )
            if rule in got and rule not in want:
                return False, f"your rules flag {rule!r} on an answer that keeps it: {why[rule]}."
    return True, (
        f"Your rules agree on all {len(cases)} made-up answers: a referral named or not, doses in mg written six ways "
        "or none, and lengths of 119, 120 and 121 words."
    )
