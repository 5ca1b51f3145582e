"""Lesson 03's exercise checks: a weighted total, StopRule's convergence, the best attempt, a fresh attempt."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

from reflect.evaluation.results import load_attempts
from reflect.judging.controller import Draft, StopRule
from reflect.judging.critics import TestGroundedCritic
from reflect.judging.hidden import judge
from reflect.model.accounting import Ledger
from reflect.model.sampling import sampling
from reflect.records import Stop
from reflect.sandbox.runner import SandboxResult, TestOutcome
from reflect.tasks.extract import extract_code
from reflect.tasks.prompts import GENERATOR_PROMPT
from reflect.tasks.task import course_tasks, get_task
from reflect.testing import ScriptedChat

from . import exercise

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
    "03.1",
    hints=(
        "keep only the weights whose criterion is in scores; if none is left, raise ValueError; divide the weighted "
        "sum by the sum of the weights you kept, not of all the weights.",
        "two sums over the same kept criteria: score times weight above the line, the weight alone below it. Then round "
        "to one decimal with round(x, 1): cutting the decimals off (int, math.floor) turns 7.67 into 7.6, not 7.7.",
    ),
    answer="def weighted_total(scores, weights):\n"
    "    used = {k: w for k, w in weights.items() if k in scores}\n"
    "    if not used:\n"
    "        raise ValueError('no criterion has a weight')\n"
    "    return round(sum(scores[k] * w for k, w in used.items()) / sum(used.values()), 1)",
)
def weighted(
    weighted_total: Callable[[dict[str, int], dict[str, float]], float],
) -> tuple[bool, str]:
    """Exercise 1: weighted_total on five cases (one an exact tie, where 5.2 and 5.3 are both right) and two without a weight."""
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


CONVERGENCE_CASES = [
    ([5, 7, 6, 7], 2),
    ([5, 6, 7], 2),
    ([6, 6], 2),
    ([8, None, 6, 7], 2),
    ([4, 5, 5, 6], 2),
    ([9, 9, 9], 1),
    ([6, 6, 6], 2),
    ([9, 5, 6, 7], 2),
    ([7, 8], 1),
    ([], 2),
    ([8, 6, None], 2),
    ([5, None, None], 2),
    ([None, 5, 6], 2),
    ([None, None, None], 2),
    ([None, 7, None, 6], 1),
    ([5, 7, 6], 1),  # converged with patience 1, not with 2: patience is not always 2
    ([6, 8, 5], 2),
]  # the 8 among the last two beat the 6 before them: not only the last score counts


def stop_rule_converged(scores: Sequence[float | None], patience: int) -> bool:
    """What StopRule decides on these scores with every rule but convergence turned off."""
    history = [Draft(i + 1, f"draft {i + 1}", s) for i, s in enumerate(scores)]
    rule = StopRule(
        threshold=math.inf,
        max_iterations=10**6,
        patience=patience,
        regression_drop=1.0,
        oscillation_window=0,
    )
    return rule.decide_drafts(history) is Stop.CONVERGED


@exercise(
    "03.2",
    hints=(
        "a round whose score is None is still a round: count the last `patience` entries of the list, None included; "
        "the best before them is the highest known score among the entries before them (if there is none, not converged).",
        "split the list by position first (the last `patience` rounds, and every round before them), then leave the None "
        "scores out of each part. Every known score among the last rounds is compared with the best before, not only the "
        "last one; and the split uses the `patience` you were given.",
    ),
    answer="def converged(scores, patience=2):\n"
    "    if len(scores) <= patience:\n"
    "        return False\n"
    "    before = [s for s in scores[:-patience] if s is not None]\n"
    "    recent = [s for s in scores[-patience:] if s is not None]\n"
    "    return bool(before) and all(s <= max(before) for s in recent)",
)
def convergence(converged: Callable[[list, int], bool]) -> tuple[bool, str]:
    """Exercise 2: converged on seventeen score lists, against what StopRule itself decides."""
    for scores, patience in CONVERGENCE_CASES:
        want = stop_rule_converged(scores, patience)
        got = converged(list(scores), patience)
        if bool(got) is not want:
            why = (
                " A None is a round with no score: it counts as one of the last rounds."
                if None in scores
                else ""
            )
            return (
                False,
                f"converged({scores}, patience={patience}) returned {got!r}; StopRule says {want}.{why}",
            )
    return True, (
        f"converged agrees with StopRule on all {len(CONVERGENCE_CASES)} score lists, "
        "unusable (None) rounds included."
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
    answer="def best_attempt(history):\n"
    "    scored = [a for a in history if a.score is not None]\n"
    "    if not scored:\n"
    "        return history[-1] if history else None\n"
    "    return max(scored, key=lambda a: (a.score, -a.iteration))",
)
def best(best_attempt: Callable[[list[Draft]], Draft | None]) -> tuple[bool, str]:
    """Exercise 3: best_attempt on six histories; it must return one of the attempts it was given."""
    got, want = [], [w for _, w in BEST_CASES]
    for scores, _ in BEST_CASES:
        history = [Draft(i + 1, f"def f():\n    return {i}", s) for i, s in enumerate(scores)]
        chosen = best_attempt(list(history))
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


REPLY = "Here is a new solution.\n```python\ndef flatten(nested):\n    return ['scripted']\n```\nIt handles nesting."
FAILED = SandboxResult(
    False,
    [
        TestOutcome("flatten([[1], [2, [3]]])", False, "[1, 2, 3]", "[]"),
        TestOutcome("flatten([])", True),
    ],
)
ALL_PASSED = SandboxResult(
    True, [TestOutcome("flatten([[1], [2, [3]]])", True), TestOutcome("flatten([])", True)]
)


class _EveryRole(dict):
    """A ScriptedChat script that answers a call in any role, so a call in the wrong role reaches the check's message."""

    def get(self, role: str, default: list | None = None) -> list:
        """The replies left for `role`: three of REPLY the first time a role is asked."""
        return self.setdefault(role, [REPLY] * 3)


def _behaves(fresh_attempt: Callable) -> str | None:
    """What is wrong with fresh_attempt on a scripted model and made-up visible results, or None."""
    task = get_task("flatten")
    old = {a.task_id: a for a in load_attempts("01_one_shot")}["flatten"].code.strip()
    quiet = ScriptedChat(_EveryRole())
    if fresh_attempt(quiet, task, ALL_PASSED) is not None or quiet.calls:
        sent = "\n".join(m.get("content", "") for c in quiet.calls for m in c.messages)
        return (
            "every visible check passed, yet fresh_attempt "
            + (f"sent: {sent[-160:]!r}." if quiet.calls else "returned something.")
            + " No failure, no evidence: return None and make no call (a prompt that says "
            "'failed these checks' over 'All 2 visible checks passed.' tells the model something false)."
        )
    fake = ScriptedChat(_EveryRole())
    code = fresh_attempt(fake, task, FAILED)
    if len(fake.calls) != 1:
        return f"for a draft that failed a visible check, fresh_attempt made {len(fake.calls)} calls; it should make one."
    call = fake.calls[0]
    sent = "\n".join(str(m.get("content", "")) for m in call.messages)
    if call.role != "generator" or any(
        call.params.get(k) != v for k, v in sampling("generator").items()
    ):
        return (
            f"the call went as role={call.role!r} with {call.params}; a fresh attempt is a generator call with "
            f"the generator's sampling, **sampling('generator') = {sampling('generator')}."
        )
    if (
        call.messages[0].get("role") != "system"
        or call.messages[0].get("content") != GENERATOR_PROMPT
    ):
        return "the first message should be the system message GENERATOR_PROMPT."
    if task.prompt() not in sent:
        return "the task's prompt, task.prompt(), is not in the messages."
    if "flatten([[1], [2, [3]]])" not in sent or "[1, 2, 3]" not in sent:
        return (
            "the failed check (its call, what was expected and what came back) is not in the messages: "
            "visible.feedback(label='visible') lists them."
        )
    if old in sent:
        return "the old draft's code is in the messages: a fresh attempt sees the failed checks, not the old code."
    want = extract_code(REPLY, task.entry_point).code
    if code != want:
        return f"fresh_attempt returned {code!r}; it should return the code extracted from the reply, {want!r}."
    return None


@exercise(
    "03.4",
    hints=(
        "if visible.passed, return None before any call. Otherwise one call: GENERATOR_PROMPT as the system message, and "
        "a user message made of task.prompt() and visible.feedback(label='visible'); the old code never goes in.",
        "the call is the generator's (its role and its own sampling settings), and the reply is text around a code block: "
        "extract_code finds the function in it. new_code needs each failing draft's visible result (the exercise names how "
        "to get it); fixed is a sorted list of ids, judged by the hidden tests, so a None (no call) is never fixed.",
    ),
    answer="def fresh_attempt(chat, task, visible):\n"
    "    if visible.passed:\n"
    "        return None  # every visible check passed: nothing to report, so no call\n"
    "    # the recorded solution's exact words: replay answers this message and no other\n"
    '    message = (f"{task.prompt()}\\n\\nA previous attempt failed these checks:\\n'
    "{visible.feedback(label='visible')}\"\n"
    '               "\\n\\nWrite a new solution from scratch that passes them.")\n'
    "    reply = chat([{'role': 'system', 'content': GENERATOR_PROMPT}, {'role': 'user', 'content': message}],\n"
    "                 role='generator', **sampling('generator'))\n"
    "    return extract_code(reply.text, task.entry_point).code\n\n\n"
    "calls_before = len(conn.ledger.records)\n"
    "failing = [tasks[tid] for tid, a in first.items() if not a.passed]\n"
    "new_code = {t.id: fresh_attempt(chat, t, TestGroundedCritic().evaluate(t, first[t.id].code).detail['result'])\n"
    "            for t in failing}\n"
    "fixed = sorted(tid for tid, code in new_code.items() if code is not None and judge(tasks[tid], code).passed)",
)
def fresh(
    fresh_attempt: Callable,
    new_code: Mapping[str, str | None] | None,
    fixed: Sequence[str] | None,
    ledger: Ledger,
    calls_before: int,
) -> tuple[bool, str] | tuple[bool, str, bool]:
    """Exercise 4: fresh_attempt on a scripted model (a failed and an all-passed visible result), then new_code
    and fixed against lesson 01's failing drafts, the hidden tests and the ledger; any number fixed, none included."""
    wrong = _behaves(fresh_attempt)
    if wrong:
        return False, wrong
    tasks = {t.id: t for t in course_tasks()}
    failing = [a for a in load_attempts("01_one_shot") if not a.passed]
    if not isinstance(new_code, Mapping) or set(new_code) != {a.task_id for a in failing}:
        return False, (
            f"fresh_attempt behaves; now new_code should map each of lesson 01's {len(failing)} failing "
            f"drafts' task ids to what fresh_attempt returned, got {new_code!r:.120}."
        )
    for a in failing:
        quiet = TestGroundedCritic().evaluate(tasks[a.task_id], a.code).detail["result"].passed
        if quiet and new_code[a.task_id] is not None:
            return (
                False,
                f"{a.task_id}'s draft passes its visible checks: new_code[{a.task_id!r}] should be None (no call).",
            )
        if not quiet and not isinstance(new_code[a.task_id], str):
            return (
                False,
                f"{a.task_id}'s draft fails a visible check: new_code[{a.task_id!r}] should be the fresh attempt's code.",
            )
    tried = sorted(t for t, code in new_code.items() if code is not None)
    calls = sum(r.role == "generator" for r in ledger.records[calls_before:])
    if calls != len(tried):
        return False, (
            f"new_code holds {len(tried)} fresh attempts, but the ledger shows {calls} generator calls since "
            "calls_before: each attempt is one new call."
        )
    want = sorted(t for t in tried if judge(tasks[t], new_code[t]).passed)
    if (
        not isinstance(fixed, list) or list(fixed) != want
    ):  # the message says it all: no hint, the count is kept
        return (
            False,
            (
                f"fixed should be the sorted list of ids whose new code passes the hidden tests "
                f"(judge(task, code).passed), {want}; got {fixed!r}."
            ),
            False,
        )
    return True, (
        f"{len(tried)} of {len(failing)} failing drafts failed a visible check and got a fresh attempt; "
        f"fixed by it, judged by the hidden tests: {', '.join(fixed) or 'none'}. The check judged what "
        "fresh_attempt does, so it passes whatever your prompt fixes, nothing included."
    )
