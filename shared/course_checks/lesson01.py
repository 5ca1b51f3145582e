"""Lesson 01's exercise checks: the learner's one-shot (against the package's, on scripted replies) and the table of
misses, then pass rate per difficulty, a stricter prompt, three samples, a pick without the oracle."""

from __future__ import annotations

import functools
import importlib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from reflect.judging.critics import TestGroundedCritic
from reflect.judging.hidden import Attempt, judge
from reflect.model.accounting import CallRecord
from reflect.model.roles import sampling
from reflect.records import Run, Stop
from reflect.strategies.one_shot import one_shot
from reflect.tasks.prompts import GENERATOR_PROMPT
from reflect.tasks.task import Task, course_tasks, get_task
from reflect.testing import ScriptedChat

from . import exercise, later
from .spec import Calls, Case, Misreading, Values, same, show

# the package modules whose functions the builds must not call (course_checks.package_calls)
one_shot_module = importlib.import_module(
    "reflect.strategies.one_shot"
)  # `one_shot` is also a function
hidden_module = importlib.import_module("reflect.judging.hidden")

LEVELS = ("easy", "medium", "hard")
HOT = {
    "temperature": 0.8,
    "max_tokens": 512,
}  # exercise 7's sampling: the first draft's cap, llama.cpp's default temperature
SEEDS = (1, 2, 3)


def _is_run(r: object) -> bool:
    """Is `r` what one_shot returns, a `Run` of one call?"""
    return isinstance(r, Run) and len(r.steps) == 1


def _three_runs(draws: object) -> bool:
    """Are `draws` what sample_three returns: a list of 3 runs of one_shot?"""
    return isinstance(draws, (list, tuple)) and len(draws) == 3 and all(_is_run(r) for r in draws)


def _call(r: Run | Attempt) -> tuple[int, int]:
    """The (prompt, completion) tokens of the call that made a run (or a baseline's graded attempt)."""
    if isinstance(r, Run):
        return r.steps[0].prompt_tokens, r.steps[0].completion_tokens
    return r.prompt_tokens, r.completion_tokens


def _unaccounted(
    found: Sequence[Run], earlier: Sequence[Attempt], records: Sequence[CallRecord]
) -> list[Run]:
    """The runs in `found` that no generator call of the ledger accounts for, once the calls of
    `earlier` (the baseline) are set aside: a call is matched by its prompt and completion tokens,
    and each call accounts for one run only."""
    calls = Counter(
        (r.prompt_tokens, r.completion_tokens) for r in records if r.role == "generator"
    )
    calls.subtract(Counter(_call(a) for a in earlier))
    missing = []
    for a in found:
        key = _call(a)
        if calls[key] > 0:
            calls[key] -= 1
        else:
            missing.append(a)
    return missing


def _undrawn(draws: Sequence[Run], records: Sequence[CallRecord]) -> int | None:
    """The first draw (its index) that no generator call of the ledger made at its seed (1, 2, 3 in order) and the
    exercise's sampling (temperature 0.8, 512 tokens), matched by its tokens, each call making one draw; None when
    every draw has its call."""
    calls = Counter(
        (r.prompt_tokens, r.completion_tokens, r.sampling) for r in records if r.role == "generator"
    )
    for i, (draw, seed) in enumerate(zip(draws, SEEDS, strict=True)):
        key = (*_call(draw), tuple(sorted({**HOT, "seed": seed}.items())))
        if calls[key] <= 0:
            return i
        calls[key] -= 1
    return None


def _failed_ids(attempts: Sequence[Attempt]) -> list[str]:
    return [a.task_id for a in attempts if not a.passed]


# --- The builds: one-shot (graded against the package's one_shot), and the table of misses. -----

# (task id, the scripted reply): a fenced draft, one that fails, prose only, two blocks, unparseable
ONE_SHOT_CASES: tuple[tuple[str, str], ...] = (
    (
        "factorial",
        '```python\ndef calculate_factorial(n):\n    """n!"""\n    if n < 0:\n        raise ValueError(n)\n    out = 1\n    for i in range(2, n + 1):\n        out *= i\n    return out\n```',
    ),
    ("fibonacci", "```python\ndef fibonacci(n):\n    return n\n```"),
    ("fibonacci", "I would use recursion here."),
    (
        "fibonacci",
        "```python\nprint('hi')\n```\n```python\ndef fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n```",
    ),
    ("palindrome", "```python\ndef is_palindrome(text):\n    return text ==\n```"),
    # two versions of the function: the code is extract_code's choice for the entry point, not every block joined
    (
        "fibonacci",
        "```python\ndef fibonacci(n):\n    return n\n```\nOr, iteratively:\n```python\ndef fibonacci(n):\n"
        "    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n```",
    ),
    # every static check passes, the hidden tests fail: passed is the hidden tests' verdict
    (
        "running_average",
        "```python\ndef running_average(numbers):\n    return [float(x) for x in numbers]\n```",
    ),
    # the hidden tests pass, a static check fails (sorted() is not a merge): passed is still the tests' verdict
    (
        "merge_sorted",
        "```python\ndef merge_sorted_lists(list1, list2):\n    return sorted(list1 + list2)\n```",
    ),
    # a helper named as the task's id, then the entry point: the code is read for task.entry_point
    (
        "factorial",
        "```python\ndef factorial(n):\n    return 1 if n < 2 else n * factorial(n - 1)\n```\nThen:\n```python\n"
        'def calculate_factorial(n):\n    """n!"""\n    if n < 0:\n        raise ValueError(n)\n    return factorial(n)\n```',
    ),
    # example usage after the function: extract_code strips it
    (
        "factorial",
        '```python\ndef calculate_factorial(n):\n    """n!"""\n    if n < 0:\n        raise ValueError(n)\n'
        "    return 1 if n < 2 else n * calculate_factorial(n - 1)\n\n# Example usage\nprint(calculate_factorial(5))\n```",
    ),
)


def _code_and_verdict(got: object, want: tuple[str, bool]) -> str | None:
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        return f"my_one_shot returned {show(got)}: return (code, passed)."
    code, passed = got
    if not isinstance(code, str) or code.strip() != want[0].strip():
        return f"the code returned was {show(code)}; extract_code gives {show(want[0])}."
    if passed is not want[1]:
        return f"passed={passed!r}; the hidden tests say {want[1]} (the result's .passed, a bool)."
    return None


def _one_shot_key(chat: Any, task: Task) -> tuple[str, bool]:
    run = one_shot(chat, task)
    return run.final_code, run.passed


ONE_SHOT = Calls(
    "my_one_shot",
    [Case(({"generator": [reply]}, get_task(tid)), tid) for tid, reply in ONE_SHOT_CASES],
    key=_one_shot_key,
    result=_code_and_verdict,
    forbid=(
        (one_shot_module,),
        {"one_shot"},
        "my_one_shot called the package's one_shot: the call is yours to write.",
    ),
)


one_shot_build = ONE_SHOT.exercise(
    "01.1",
    "one_shot_build",
    hints=(
        "two messages: {'role': 'system', 'content': GENERATOR_PROMPT} and {'role': 'user', 'content': task.prompt()}, "
        "sent as chat(messages, role='generator'): the chat you are given carries the sampling already.",
        "the code is extract_code(reply.text, task.entry_point).code, and task.run(code) runs the hidden tests in the "
        "sandbox: its .passed is the verdict. Return (code, passed).",
    ),
    passed=(
        f"On {len(ONE_SHOT_CASES)} scripted replies your one-shot sent the package's request and returned its "
        "code and the hidden tests' verdict."
    ),
)


# The drafts the verdict build is graded on (01.2): (task id, code); the truth is the package's judge.
_VERDICT_ROWS = (
    ("factorial", ONE_SHOT_CASES[0][1].split("```python\n")[1].split("```")[0]),
    ("fibonacci", "def fibonacci(n):\n    return n\n"),
    ("fibonacci", ""),
    ("palindrome", "def is_palindrome(text):\n    return text ==\n"),
    ("factorial", "def calculate_factorial(n):\n    out = 1\n    for i in range(2, n + 1):\n        out *= i\n    return out\n"),
    ("word_count", "def word_count(text):\n    raise RuntimeError('not yet')\n"),
    ("word_count", "def word_count(text):\n    return {'FAIL': 1}\n"),  # FAIL in the call's value
    ("merge_sorted", "def merge_sorted_lists(list1, list2):\n    return sorted(list1 + list2)\n"),
    ("fibonacci", "   \n"),
    ("factorial", "def calculate_factorial(*a):\n    return 1\n"),  # several requirements missed
    ("factorial", "def calculate_factorial(n):\n    return 1\nraise ValueError('bad\\nsecond line')\n"),
    ("fibonacci", "def fibonacci(n):\n    import os\n    os._exit(3)\n"),  # an error and a failure
)  # fmt: skip


# a made-up task whose entry point starts with letters of "FAIL ": its failures' calls keep them
AREA = Task(
    "area",
    "Area",
    "Write Area(w, h): the area of a w by h rectangle.",
    tests="assert Area(2, 3) == 6\n",
)
VERDICT = Values(
    "verdict_of",
    [Case((get_task(tid), code)) for tid, code in _VERDICT_ROWS]
    + [Case((AREA, "def Area(w, h):\n    return w + h\n"), "a failing call that starts with an A")],
    oracle=lambda task, code: (lambda v: (v.passed, v.first_failure, v.static_failures))(
        judge(task, code)
    ),
    misreadings=[
        Misreading(
            lambda task, code: (
                lambda v: (
                    v.passed,
                    "FAIL " + v.first_failure if v.first_failure else "",
                    v.static_failures,
                )
            )(judge(task, code)),
            "first_failure is the failure's describe() without its leading 'FAIL '.",
        ),
        Misreading(
            lambda task, code: (
                lambda v: (v.passed, v.first_failure, [c.reason for c in task.static_checks(code)])
            )(judge(task, code)),
            "missed holds the reasons of the static checks that did not pass, not of all of them.",
        ),
        Misreading(
            lambda task, code: (
                lambda v: (
                    v.passed,
                    code.strip() and not v.passed and task.run(code).error or v.first_failure,
                    v.static_failures,
                )
            )(judge(task, code)),
            "a failed test comes first: a run that ended early has an error and a failed test, and first_failure is "
            "the test's describe(); the error only where no test failed.",
        ),
    ],
    forbid=(
        (hidden_module,),
        {"judge"},
        "verdict_of called the package's judge: reading the run is yours to write.",
    ),
)


verdict = VERDICT.exercise(
    "01.2",
    "verdict",
    hints=(
        "task.run(code) gives a result with .passed, .failures (the failed tests, each with .describe()) and .error "
        "(why nothing ran, e.g. a syntax error); task.static_checks(code) gives checks with .passed and .reason.",
        "first_failure is \"\" when the run passed; else the first failure's describe() without its leading 'FAIL ', "
        "or the run's error when no test failed. An empty draft fails with the reason 'no code in the reply'. missed "
        "is the reasons of the static checks that did not pass.",
    ),
    passed=(
        f"On {len(VERDICT.cases)} drafts your verdict reads the run as the package's judge does: passed, the first "
        "failure, the requirements missed."
    ),
)


BASELINE_TASKS = ("factorial", "fibonacci", "palindrome")
BASELINE_REPLIES = ONE_SHOT_CASES[0][1], ONE_SHOT_CASES[1][1], ONE_SHOT_CASES[4][1]
BASELINE = Calls(
    "my_baseline",
    [
        Case(
            ({"generator": list(BASELINE_REPLIES)}, [get_task(t) for t in BASELINE_TASKS]),
            "three tasks",
        ),
        Case(
            (
                {"generator": [BASELINE_REPLIES[2], BASELINE_REPLIES[0]]},
                [get_task("palindrome"), get_task("factorial")],
            ),
            "two tasks",
        ),
        Case(({"generator": []}, []), "no task"),
    ],
    key=lambda chat, tasks: {t.id: one_shot(chat, t).passed for t in tasks},
    forbid=(
        (one_shot_module,),
        {"one_shot"},
        "my_baseline called the package's one_shot: use your my_one_shot.",
    ),
).register("01.3")


@exercise(
    "01.3",
    hints=(
        "loop over tasks, calling your my_one_shot(chat, task) once for each, in order.",
        "return a dict: {task.id: passed} (passed is the second item my_one_shot returns).",
    ),
)
def baseline(my_baseline: Callable[[Any, Sequence[Task]], object]) -> tuple[bool, str]:
    """Build 3: the learner's baseline over tasks, against the package's one_shot on the same scripted replies."""
    problem = BASELINE.problem(my_baseline)
    if problem:
        return False, problem
    want = BASELINE.key(
        ScriptedChat({"generator": list(BASELINE_REPLIES)}), [get_task(t) for t in BASELINE_TASKS]
    )
    return True, f"One call per task, in order, and the hidden tests' verdict for each: {want}."


MADE_UP_ATTEMPTS = [
    Attempt("a", "easy", True, 3, 3, ""),
    Attempt("b", "medium", False, 1, 4, "f(2): expected 1, got 2"),
    Attempt("c", "hard", False, 0, 0, "no code in the reply"),  # judge's 0/0 for an empty draft
    Attempt("d", "easy", True, 2, 2, "", ["no docstring"]),
    Attempt("e", "hard", False, 2, 5, "f([]): raised IndexError"),
    Attempt("b", "medium", False, 0, 4, "f(0): expected 0, got 1"),  # the same task drawn again
]
MISSES = Values(
    "misses_of",
    [Case((MADE_UP_ATTEMPTS[i:j],)) for i, j in ((0, 6), (1, 3), (0, 1), (2, 5), (0, 0))]
    + [Case(([MADE_UP_ATTEMPTS[1]] * 2,), "the same failure twice")]
    + [
        Case(
            ([Attempt("f", "medium", False, 3, 3, ""), MADE_UP_ATTEMPTS[0]],),
            "a failure with no failed test to quote (every test passed, a requirement missed)",
        )
    ],
    oracle=lambda attempts: [
        (a.task_id, a.n_passed, a.n_tests, a.first_failure) for a in attempts if not a.passed
    ],
    equal=lambda got, want: isinstance(got, (list, tuple)) and same([tuple(r) for r in got], want),
    misreadings=[
        Misreading(
            lambda attempts: [
                (a.task_id, a.n_passed, a.n_tests, a.first_failure) for a in attempts
            ],
            "Passing attempts have no row: only the misses.",
        )
    ],
)


misses = MISSES.exercise(
    "01.5",
    "misses",
    hints=(
        "one row per attempt that failed (a.passed is False), in the order of attempts.",
        "each row is (a.task_id, a.n_passed, a.n_tests, a.first_failure); passing attempts have no row.",
    ),
    lesson=lambda attempts: [Case((list(attempts),), "the baseline's attempts")],
    passed=lambda misses_of, attempts: (
        f"One row per failure: {len(MISSES.oracle(attempts))} of the baseline's {len(attempts)} tasks fail."
    ),
)


def _rates(attempts: Sequence[Attempt]) -> dict[str, float]:
    """The truth: each level's share of passing attempts, 0.0 for a level with none."""
    out = {}
    for level in LEVELS:
        group = [a for a in attempts if a.difficulty == level]
        out[level] = sum(a.passed for a in group) / len(group) if group else 0.0
    return out


def _attempts(spec: str) -> list[Attempt]:
    """Made-up attempts from a spec like 'eP mf hS eP@x': level (e, m, h), then P for a pass, f for a failure, S
    for a pass with a static check missed; after @, the task's id (two attempts at one task), else its own."""
    levels = {"e": "easy", "m": "medium", "h": "hard"}
    return [
        Attempt(
            w.partition("@")[2] or f"t{i}",
            levels[w[0]],
            w[1] in "PS",
            1,
            1,
            "" if w[1] in "PS" else "f(1): expected 1, got 0",
            ["has no docstring"] if w[1] == "S" else [],
        )
        for i, w in enumerate(spec.split())
    ]


RATES = Values(
    "rates_by_level",
    [
        Case((_attempts(spec),))
        for spec in (
            "eP ef mP mP mf hf",
            "eP eP ef mf hP hf hf",
            "mP mf",
            "hP",
            "",
            "ef ef eP mP hP hf hP",
            "eS eP mS mf hS",  # passes that missed a static check still pass
            "ef@x ef@x eP@x eP@y mf@z mP@w",  # one task tried twice: a rate is over attempts, not tasks
        )
    ],
    oracle=_rates,
    misreadings=[
        Misreading(
            lambda attempts: {
                lv: sum(a.passed for a in attempts if a.difficulty == lv) for lv in LEVELS
            },
            "Those are counts of passing attempts: divide by the attempts at that level.",
        ),
        Misreading(
            lambda attempts: {
                lv: sum(a.passed for a in attempts if a.difficulty == lv) / max(len(attempts), 1)
                for lv in LEVELS
            },
            "That divides by all the attempts: a level's rate is over the attempts at that level.",
        ),
        Misreading(
            lambda attempts: {lv: round(r, 2) for lv, r in _rates(attempts).items()},
            "Keep the share unrounded; round only when you print it.",
        ),
    ],
).register("01.4")


@exercise(
    "01.4",
    hints=(
        "every Attempt has a .difficulty: group the attempts by it, then take the share that passed in each group.",
        "pass_rate(list_of_attempts) is that share, between 0 and 1 (0.0 for an empty list): call it on the attempts "
        "of one level at a time, for each of 'easy', 'medium' and 'hard'.",
    ),
)
def per_level(
    rates_by_level: Callable[[Sequence[Attempt]], object],
    attempts: Sequence[Attempt],
    rate_by_level: object = None,
) -> tuple:
    """Build 4: one pass rate (an unrounded share between 0 and 1) per difficulty, on made-up attempts (a level with
    none among them) and on the baseline's."""
    if not callable(rates_by_level):
        return False, (
            f"rates_by_level is {type(rates_by_level).__name__}, not a function: write def rates_by_level(attempts) "
            "returning the dict, then rate_by_level = rates_by_level(attempts)."
        )
    problem = RATES.problem(rates_by_level, also=[Case((list(attempts),), "section 2's attempts")])
    if problem:
        return False, problem
    if not same(rate_by_level, _rates(attempts), tol=0):
        return later(
            f"rates_by_level is right, but rate_by_level is {show(rate_by_level)}: keep rate_by_level = "
            "rates_by_level(attempts), the unrounded shares."
        )
    shown = ", ".join(f"{level} {rate:.0%}" for level, rate in _rates(attempts).items())
    return True, f"Per-level pass rates match on made-up attempts and on section 2's: {shown}."


def _retry_key(chat: Any, attempts: Sequence[Attempt], prompt: str) -> list[Run]:
    return [
        one_shot(chat, get_task(a.task_id), system_prompt=prompt) for a in attempts if not a.passed
    ]


def _retry_cases() -> list[Case]:
    """Made-up attempts (a task failed twice among them), each failed task's scripted reply, and a made-up prompt."""

    def attempt(tid: str, passed: bool, n: int) -> Attempt:
        return Attempt(tid, get_task(tid).difficulty, passed, n, 8, "" if passed else "made up")

    sets = (
        (
            "factorial flatten- fibonacci caesar- median-",
            "You write Python. Check every listed requirement first.",
        ),
        (
            "palindrome- roman_to_int",
            "Another made-up system prompt: write the function, and nothing else.",
        ),
        ("flatten- caesar flatten-", "You write Python. Check every listed requirement first."),
    )
    cases = []
    for names, prompt in sets:
        attempts = [
            attempt(t.rstrip("-"), not t.endswith("-"), n) for n, t in enumerate(names.split())
        ]
        replies = [
            f"```python\ndef {get_task(a.task_id).entry_point}(*args):\n    return {n}\n```"
            for n, a in enumerate(attempts)
            if not a.passed
        ]
        cases.append(
            Case(
                ({"generator": replies}, attempts, prompt),
                "made-up attempts where "
                + ", ".join(a.task_id for a in attempts if not a.passed)
                + " failed",
            )
        )
    return cases


def _new_runs(got: object, want: list[Run]) -> str | None:
    if not isinstance(got, (list, tuple)) or not all(isinstance(r, Run) for r in got):
        return f"retry_failed returned {show(got)}: return the list of the runs one_shot made."
    if [(r.task_id, r.final_code) for r in got] != [(r.task_id, r.final_code) for r in want]:
        return (
            f"retry_failed returned runs of {[r.task_id for r in got]}; expected the new runs its calls made, of "
            f"{[r.task_id for r in want]} (one per failed attempt, in order)."
        )
    return None


RETRY = Calls(
    "retry_failed",
    _retry_cases(),
    key=_retry_key,
    result=_new_runs,
    after=lambda key_args, my_args, *_: (
        None
        if my_args[0] == key_args[0]
        else "retry_failed changed the attempts it was given: the lesson still needs them, so build a new list."
    ),
).register("01.6")


@exercise(
    "01.6",
    hints=(
        "one new call per attempt that failed, in the order of `attempts`: get_task turns an attempt's task_id "
        "back into its Task, and one_shot takes a system_prompt= argument.",
        "use the `chat` it is given as it is (section 2's chat keeps temperature 0, seed 42 and 512 tokens): no "
        "partial of your own, not conn.chat; return the list of the new runs (what one_shot returns).",
    ),
)
def stricter_prompt(
    retry_failed: Callable[[Any, Sequence[Attempt], str], Sequence[Run]],
    careful_prompt: str | None,
    retry: Sequence[Run] | None,
    attempts: Sequence[Attempt],
    conn: Any,
) -> tuple:
    """Exercise 6: retry_failed on a stand-in chat (only the failed tasks, in order, with the prompt it is
    given, through the chat it is given), then the real retry: new calls, one new system prompt for all.

    The real calls leave their evidence in the tokens: a new system prompt changes every request's
    prompt tokens by the same amount (the task's message is unchanged), and every new run is a
    call the ledger holds beyond the baseline's."""
    problem = RETRY.problem(retry_failed)
    if problem:
        return False, problem
    records = conn.ledger.records
    if not isinstance(careful_prompt, str) or not careful_prompt.strip():
        return later(
            "retry_failed is right. CAREFUL_PROMPT should be your system prompt, a non-empty string."
        )
    if careful_prompt.strip() == GENERATOR_PROMPT.strip():
        return later(
            "retry_failed is right, but CAREFUL_PROMPT is the course's GENERATOR_PROMPT: write a stricter one."
        )
    if any(t.prompt().strip() in careful_prompt for t in course_tasks()):
        return later(
            "retry_failed is right, but CAREFUL_PROMPT holds a task's own text: the task is the user's message."
        )
    if "requirement" not in careful_prompt.lower():
        return later(
            "retry_failed is right, but CAREFUL_PROMPT never asks about the requirements: the statement asks for a "
            "prompt that has the model go through every listed requirement before it answers."
        )
    if not _CODE_ONLY.search(careful_prompt):
        return later(
            "retry_failed is right, but CAREFUL_PROMPT never asks for the code alone: the statement asks that the "
            "model still output only code, so that the requirements are the one thing the prompt changes."
        )
    if retry is None:
        return later(
            "retry_failed and CAREFUL_PROMPT are ready; now keep retry_failed(chat, attempts, CAREFUL_PROMPT) "
            "in retry (one new call per failed task: live only, unless it is the recorded prompt)."
        )
    if not isinstance(retry, (list, tuple)) or not all(_is_run(a) for a in retry):
        return later(
            f"retry should be the list of runs that retry_failed returns, not {type(retry).__name__}."
        )
    want = _failed_ids(attempts)
    got = [a.task_id for a in retry]
    if got != want:
        return later(
            f"retry covers {got}; the failed tasks, in order, are {want}: keep "
            "retry_failed(chat, attempts, CAREFUL_PROMPT) in retry."
        )
    missing = _unaccounted(retry, attempts, records)
    want_sampling = tuple(sorted(sampling("generator").items()))
    unsampled = [
        r.task_id
        for r in retry
        if not any(
            c.sampling == want_sampling
            for c in records
            if c.role == "generator" and (c.prompt_tokens, c.completion_tokens) == _call(r)
        )
    ]
    if not missing and unsampled:
        return later(
            f"the retries of {unsampled} went to the model without the first draft's sampling (temperature "
            "0.0, seed 42, 512 tokens): pass section 2's `chat`, which carries it, not conn.chat."
        )
    if missing:
        return later(
            f"no model call in the ledger accounts for the retry of {[a.task_id for a in missing]}: "
            "each run in retry should come from a new one_shot call (the baseline's attempts, or "
            "copies of them, do not count)."
        )
    before = {a.task_id: a for a in attempts}
    shift = {a.task_id: _call(a)[0] - before[a.task_id].prompt_tokens for a in retry}
    if len(set(shift.values())) > 1:
        return later(
            f"the retries' prompts grew by {shift} tokens: one system prompt for every task changes "
            "them all by the same amount. Send CAREFUL_PROMPT, the same for every task."
        )
    delta = next(iter(shift.values()), 0)
    if delta == 0:
        return later(
            "retry's runs have the baseline's prompt tokens: they are the baseline's own runs, or calls sent with "
            "the course's GENERATOR_PROMPT. Each retry is a new call with CAREFUL_PROMPT."
        )
    fixed = sum(a.passed for a in retry)
    return True, (
        f"retry_failed re-runs only the failed tasks, with the prompt and the chat it is given; your "
        f"prompt re-ran all {len(retry)} ({delta:+d} prompt tokens per call, new calls), and {fixed} of "
        f"{len(retry)} now pass. Compare with lesson 02's loop."
    )


_CODE_ONLY = re.compile(
    r"\bonly\b[^.]{0,40}\bcode\b|\bcode\b[^.]{0,20}\bonly\b|nothing but[^.]{0,30}\bcode\b", re.I
)


def _fenced(code: str) -> str:
    return f"```python\n{code}```"


FACT_GOOD = (
    'def calculate_factorial(n):\n    """n! for a non-negative integer n."""\n    if n < 0:\n'
    "        raise ValueError(n)\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n"
)
FACT_VISIBLE_ONLY = "def calculate_factorial(n):\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n"  # no raise, no docstring
FACT_BAD = "def calculate_factorial(n):\n    return n\n"


def _draft(task: Task, code: str, n: int) -> Run:
    """A made-up draw: its code, its hidden verdict, and its number (so that two draws of the same code differ)."""
    return Run(
        strategy="one-shot",
        task_id=task.id,
        final_code=code,
        stop=Stop.SINGLE_DRAFT,
        chosen=f"draw {n}",
        passed=judge(task, code).passed,
    )


def _visible(task: Task, draws: Sequence[Run]) -> Run:
    """The truth: the best visible score (TestGroundedCritic), the earliest draw on a tie."""
    scores = [TestGroundedCritic().evaluate(task, d.final_code).score or 0 for d in draws]
    return draws[scores.index(max(scores))]


_PICK_ROWS = (
    ("factorial", [FACT_GOOD, FACT_GOOD]),
    ("factorial", [FACT_VISIBLE_ONLY, FACT_GOOD]),  # as high on the visible tests: the earlier one
    ("factorial", [FACT_BAD, FACT_GOOD, ""]),
    ("factorial", [FACT_GOOD, FACT_GOOD.replace('    """n! for a non-negative integer n."""\n', "")]),  # a tie: the
    # later draw is shorter, and still the earlier one wins
    ("factorial", ["", FACT_BAD]),
    ("factorial", ["", "def calculate_factorial(n) return 1\n"]),  # an empty draft tied with one that does not load: the earlier
    ("factorial", ["", "   \n"]),  # nothing but empty drafts: still one of them
    ("factorial", [FACT_BAD, FACT_VISIBLE_ONLY]),
    ("factorial", [FACT_BAD, "def calculate_factorial(n):\n    return 1\n", FACT_BAD]),  # the best is no 10 and not the last draw
    ("fibonacci", ["def fibonacci(n):\n    return n\n", "def fibonacci(n):\n    return 0\n", "def fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n"]),
)  # fmt: skip


def _pick_cases() -> list[Case]:
    cases = []
    for tid, codes in _PICK_ROWS:
        task = get_task(tid)
        cases.append(Case((task, [_draft(task, c, i) for i, c in enumerate(codes, 1)])))
    return cases


PICK = Values(
    "pick",
    _pick_cases(),
    oracle=_visible,
    misreadings=[
        Misreading(
            lambda task, draws: next((d for d in draws if d.passed), draws[0]),
            "That reads the hidden tests (.passed, judge, task.run), evidence pick will not have at run time: score with the visible tests only.",
        ),
        Misreading(
            lambda task, draws: max(
                reversed(draws),
                key=lambda d: TestGroundedCritic().evaluate(task, d.final_code).score or 0,
            ),
            "Among equal visible scores the earliest draw wins.",
        ),
    ],
    forbid=(
        (hidden_module,),
        {"judge"},
        "pick read the hidden tests (judge): score with the visible tests only.",
    ),
    show=lambda v: (
        f"<draws {[d.chosen for d in v]}>"
        if isinstance(v, list)
        else (v.chosen if isinstance(v, Run) else show(v))
    ),
).register("01.8")


def _made_up_draws(verdicts: str) -> list[Run]:
    """Made-up draws of factorial, one a letter: P passes the hidden tests, f fails; each draw's code is what its
    verdict says (a learner may judge the code again rather than read .passed)."""
    return [
        Run(strategy="one-shot", task_id="factorial", final_code=_FACTORIAL[v == "P"].format(i=i),
            stop=Stop.SINGLE_DRAFT, chosen=f"draw {i}", passed=v == "P")
        for i, v in enumerate(verdicts, 1)
    ]  # fmt: skip


_FACTORIAL = (
    "def calculate_factorial(n):\n    return {i}\n",
    'def calculate_factorial(n):\n    """n!, draw {i}."""\n    if n < 0:\n        raise ValueError(n)\n'
    "    return 1 if n < 2 else n * calculate_factorial(n - 1)\n",
)


def _sample_three_key(chat: Any, task: Task) -> list[Run]:
    return [one_shot(functools.partial(chat, **HOT, seed=seed), task) for seed in SEEDS]


SAMPLE = Calls(
    "sample_three",
    [
        Case(({"generator": [_fenced(c) for c in (FACT_BAD, FACT_GOOD, FACT_VISIBLE_ONLY)]}, get_task("factorial"))),
        Case(({"generator": [f"```python\ndef is_palindrome(text):\n    return {s == 2}\n```" for s in SEEDS]},
              get_task("palindrome"))),
    ],
    key=_sample_three_key,
    result=lambda got, want: (
        None
        if isinstance(got, (list, tuple)) and all(isinstance(r, Run) for r in got)
        and [r.final_code for r in got] == [r.final_code for r in want]
        else f"sample_three returned {show(got)}: return the 3 runs one_shot made, seed 1's first, then 2, then 3."
    ),
).register("01.7")  # fmt: skip


PASSES_ANY = Values(
    "passes_any",
    [Case((_made_up_draws(v),)) for v in ("fff", "fPf", "PPP", "ffP", "Pff", "", "f")],
    oracle=lambda draws: any(d.passed for d in draws),
    equal=lambda got, want: isinstance(got, bool) and got == want,
    misreadings=[
        Misreading(
            lambda draws: all(d.passed for d in draws),
            "That says whether every draw passes, not any.",
        ),
        Misreading(
            lambda draws: [d.passed for d in draws], "Return one bool, not the list of verdicts."
        ),
        Misreading(
            lambda draws: bool(draws),
            "Any draw at all is not a draw that passes: read each draw's .passed.",
        ),
    ],
    show=lambda v: (
        f"<draws {''.join('P' if d.passed else 'f' for d in v)} of {v[0].task_id if v else 'no task'}>"
        if isinstance(v, list) and all(isinstance(d, Run) for d in v)
        else show(v)
    ),
).register("01.7")


@exercise(
    "01.7",
    hints=(
        "sample_three calls one_shot three times, once per seed, each time with `chat` fixed at that seed's "
        "sampling: functools.partial fixes keyword arguments (temperature, seed, max_tokens).",
        "each draw needs its own chat: a partial of `chat` with the exercise's temperature, token cap and one seed. "
        "Build one per seed, call one_shot with each, and keep the runs in seed order.",
    ),
)
def pass_at_three(
    sample_three: Callable[[Any, Task], Sequence[Run]],
    first_failed: Task | None,
    draws: Sequence[Run] | None,
    passes_any: Callable[[Sequence[Run]], object],
    attempts: Sequence[Attempt],
    conn: Any,
) -> tuple:
    """Exercise 7: sample_three on a stand-in chat (temperature 0.8, seeds 1-3, 512 tokens, in seed order),
    then the real draws of the first failed task (new calls), and passes_any on made-up draws and on them."""
    problem = SAMPLE.problem(sample_three)
    if problem:
        return False, problem
    records = conn.ledger.records
    first_id = _failed_ids(attempts)[0]
    if not isinstance(first_failed, Task) or first_failed.id != first_id:
        said = (
            first_failed.id
            if isinstance(first_failed, Task)
            else f"an attempt of {first_failed.task_id}"
            if isinstance(first_failed, (Attempt, Run))
            else repr(first_failed)[:60]
        )
        return later(
            f"sample_three is right. first_failed is {said}: it should be the Task of the first attempt "
            "that failed, get_task(its task_id)."
        )
    if draws is None:
        return later(
            "sample_three is right; now keep sample_three(conn.chat, first_failed) in draws (three model "
            "calls: run that line once, in replay a recorded call plays once)."
        )
    if not _three_runs(draws):
        return later(
            "draws should hold the 3 runs that sample_three(conn.chat, first_failed) returns."
        )
    if {a.task_id for a in draws} != {first_id}:
        return later(
            f"draws are runs of {[a.task_id for a in draws]}; the first failed task is "
            f"{first_id!r}."
        )
    missing = _unaccounted(draws, attempts, records)
    if missing:
        return later(
            f"no new call in the ledger made {len(missing)} of the draws: they are the temperature-0 "
            "draft again (or copies), not three samples; sample_three(conn.chat, first_failed) makes "
            "them."
        )
    undrawn = _undrawn(draws, records)
    if undrawn is not None:
        return later(
            f"no call in the ledger at temperature 0.8, 512 tokens and seed {SEEDS[undrawn]} made draw "
            f"{undrawn + 1}: keep in draws what sample_three(conn.chat, first_failed) returns, the draws of seeds "
            "1, 2 and 3 in that order."
        )
    problem = PASSES_ANY.problem(passes_any, also=[Case((list(draws),), "exercise 7's draws")])
    if problem:
        return later(f"sample_three and the draws are right, but {problem}")
    passing = [str(SEEDS[i]) for i, a in enumerate(draws) if a.passed]
    who = (
        "no draw passes"
        if not passing
        else f"seed {passing[0]}'s draw passes"
        if len(passing) == 1
        else f"the draws of seeds {', '.join(passing)} pass"
    )
    return True, (
        f"sample_three samples at temperature 0.8, seeds 1-3. passes_any(draws) = {bool(passing)}: {who} the "
        f"hidden tests of {first_id}, where the temperature-0 draft failed."
    )


@exercise(
    "01.8",
    hints=(
        "the visible tests are TestGroundedCritic's: its evaluate(task, code) gives a score from 1 to 10, "
        "without the hidden tests.",
        "pick may not look at .passed, judge or task.run: those are the hidden tests. Score every draft first; "
        "list.index returns the first position of a value, which settles ties.",
    ),
)
def without_oracle(
    pick: Callable[[Task, Sequence[Run]], Run],
    draws: Sequence[Run] | None,
    chosen: Run | None,
) -> tuple:
    """Exercise 8: pick on made-up drafts (visible tests only, never the oracle, earliest on a tie), then the
    draft it chooses among exercise 7's draws."""
    problem = PICK.problem(pick)
    if problem:
        return False, problem
    if not _three_runs(draws):
        return later("pick is right. Run exercise 7 first: chosen is picked among its three draws.")
    task = get_task(draws[0].task_id)
    scores = [TestGroundedCritic().evaluate(task, a.final_code).score for a in draws]
    best = scores.index(max(scores))
    if chosen is None:
        return later("pick is right; now keep pick(first_failed, draws) in chosen.")
    if chosen is not draws[best]:
        if not any(chosen is a for a in draws):
            return later(
                "pick is right, but chosen is not one of the draws (the very object): keep "
                "pick(first_failed, draws) in chosen."
            )
        return later(
            f"pick is right, but chosen is not the draw it chooses: the visible scores are {scores}, "
            f"so it is draw {best + 1} (seed {SEEDS[best]})."
        )
    verdict = "passes" if chosen.passed else "fails"
    return True, (
        f"pick scores by the visible tests only. On the draws they scored {scores} and chose seed "
        f"{SEEDS[best]}'s draw, which {verdict} the hidden tests."
    )
