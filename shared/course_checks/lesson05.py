"""Lesson 05's checks: the learner's attempt and reflection, the Reflexion loop and the memory round trip (each
against the package's `Reflexion` and `MemoryStore`); then the memory window, vague reflections, and one memory key
for rewordings of a task."""

from __future__ import annotations

import functools
import json
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from reflect.judging.self_tests import run_self_tests
from reflect.memory.store import Episode, MemoryStore, task_key
from reflect.model.roles import sampling
from reflect.records import Run
from reflect.strategies import reflexion as reflexion_module
from reflect.strategies.reflexion import Reflexion, parse_judgement
from reflect.tasks.extract import extract_code
from reflect.tasks.prompts import (
    EVALUATOR_SYSTEM,
    attempt_request,
    evaluator_messages,
    generator_messages,
    reflection_messages,
)
from reflect.tasks.task import Task, course_tasks, get_task
from reflect.testing import ScriptedChat

from . import MEMORY_DISK, called_on, exercise, offline
from .spec import (
    REAL_CALL,
    Calls,
    Case,
    Misreading,
    Properties,
    Values,
    Wrong,
    show,
)

Chat = Callable[..., object]
TestsFor = Callable[[Chat, Task], list[str]]


LABELLED = {  # a reflection: (worth remembering, why)
    "Call  f([])  and  check  the  output  again": (False, "7 words, two spaces between each"),
    "flatten([[1, [2]]]) returned [1, [2]]: recurse into every list, not only the first level.": (True, "names a call"),
    "running_average([]) raised UnboundLocalError; set total = 0 before the loop.": (True, "names a call"),
    "The caesar shift must wrap: 'z' shifted by 1 is 'a', so take the offset modulo 26.": (True, "names values"),
    "Improve the code quality and be more careful next time.": (False, "names nothing concrete"),
    "Handle the edge cases properly and think about the requirements.": (False, "names nothing concrete"),
    "Fix the bug.": (False, "shorter than 8 words"),
    "The loop reads numbers[i] past the end when the list has only one item.": (False, "an index is not [], and names nothing concrete"),
    "The function's result and the list's length are both off by one here.": (False, "two apostrophes quote nothing"),
    "f([]) returned None.": (False, "shorter than 8 words"),
    "Here is the fix:\n```python\ndef flatten(nested):\n    return sum(nested, [])\n```": (False, "carries code"),
    "The function should def flatten(x) recursively and return [1, 2] for [[1], [2]].": (False, "carries a def"),
    "Don't forget to think about the edge cases, and don't rush the requirements next time.": (False, "names nothing concrete (its apostrophes quote nothing)"),
    "Step 1: think harder about the problem. Step 2: check the requirements again.": (False, "names nothing concrete (step numbers are not values)"),
    "Be careful (very careful) with the inputs and the outputs of the function.": (False, "names nothing concrete (a remark in parentheses is not a call)"),
    "Call the reset() method first, and then check the returned total again.": (False, "names nothing concrete (a call without its argument)"),
    'parse_duration("45s") raised ValueError: allow a duration with seconds only.': (True, "names a call with a quoted value"),
    'The check failed because the input "abc" came back reversed as the output.': (True, "names a value in double quotes, and nothing else concrete"),
    "f([]) returned None; return an empty list instead.": (True, "names a call, in exactly 8 words"),
    "An empty input must give [] back instead of raising an error.": (True, "names [] and nothing else concrete"),
    "Define the default result as 'none' before reading any of the inputs.": (True, "names a quoted value (define and default are words, not a def)"),
    "Here is the corrected version of the whole function:\n```\nreturn sum(nested, [])\n```": (False, "carries code in a fence without a language"),
}  # fmt: skip


def _is_specific(text: str) -> bool:
    """The truth the real reflections are graded against: no code, at least 8 words, and a call with its
    argument, a quoted value or [] named."""
    text = text.strip()
    if "```" in text or re.search(r"\bdef \w+\(", text) or len(text.split()) < 8:
        return False
    return bool(re.search(r"\w\([^()]+\)|(?<!\w)'[^'\n]+'(?!\w)|\"[^\"\n]+\"|\[\]", text))


def _prose(reflection: str) -> str:
    """A reflection's words before any code it carries (every real reflection of the experiment carries code)."""
    return re.split(r"```|Here's the corrected|Here is the corrected", reflection)[0].strip()


SPECIFIC = Values(
    "is_specific",
    [Case((text,), why) for text, (_, why) in LABELLED.items()],
    oracle=lambda text: LABELLED[text][0] if text in LABELLED else _is_specific(text),
    equal=lambda got, want: isinstance(got, bool) and got is want,
    misreadings=[
        Misreading(
            lambda t: len(t.split()) >= 8 and "```" not in t,
            "Long enough and free of code is not enough: it must name something concrete (a call, a quoted value, []).",
        ),
        Misreading(
            lambda t: bool(re.search(r"\w\(", t)) and len(t.split()) >= 8,
            "A reflection that carries code is not worth keeping, whatever else it names.",
        ),
    ],
).register("05.7")


@exercise(
    "05.7",
    hints=(
        "three tests in order: does it carry code (a ``` fence, or 'def name(')? is it shorter than 8 words? "
        "does it name something concrete?",
        "len(text.split()) counts words; a concrete anchor is a call with something in its parentheses, like f([]), "
        "a quoted value whose opening quote does not follow a letter (an apostrophe in don't quotes nothing), or []: "
        "one re.search with alternatives finds any of them. A bare number (Step 1) is not an anchor.",
    ),
)
def specific(is_specific: Callable[[str], object], reflections: Sequence[str]) -> tuple[bool, str]:
    """Exercise 7: is_specific on labelled reflections, then on the words before the code of the experiment's real
    reflections (the rule's verdict), then how many of them it keeps."""
    prose = [_prose(t) for t in reflections]
    problem = SPECIFIC.problem(
        is_specific,
        also=[Case((t,), "the words before the code of a real reflection") for t in prose],
    )
    if problem:
        return False, problem
    kept = sum(bool(is_specific(t)) for t in reflections)
    return True, (
        f"All {len(LABELLED)} labelled reflections sorted right. It keeps {kept} of the experiment's "
        f"{len(reflections)} real reflections (each carries code); of their words before the code, it keeps "
        f"{sum(map(_is_specific, prose))} of {len(prose)}."
    )


# the reflections a prompt carries: Reflexion's default window, what a recall returns at most
WINDOW = 3
REWORDINGS = {
    "upper case": str.upper,
    "doubled spaces and a newline": lambda t: "  " + t.replace(" ", "  ") + "\n",
    "no full stops": lambda t: t.replace(".", ""),
    "no commas or colons": lambda t: t.replace(",", "").replace(":", ""),
    "brackets, quotes, hyphens and other marks as spaces": lambda t: t.translate(
        str.maketrans("()[]{}'\"`-;!?", " " * 13)
    ),
}


DISTINCT = (  # (task text, another task's text, what the key must not throw away)
    ("Write f(x) that returns x plus one.\n\nRequirements:\n- a negative x raises ValueError", "Write f(x) that returns x plus one.\n\nRequirements:\n- a negative x returns 0", "the same first sentence, other requirements"),
    ("Write sub(a, b) that returns a minus b.", "Write sub(a, b) that returns b minus a.", "the same words in another order"),
    ("Write f(x) that returns x squared.\n\nRequirements:\n- a negative x raises ValueError", "Write f(x) that returns x cubed.\n\nRequirements:\n- a negative x raises ValueError", "the same requirements, another statement"),
    ("Write f(x) that returns x plus 1.", "Write f(x) that returns x plus 2.", "a number in the statement"),
    ("Write a function f(x) that returns x plus one.", "Write a function f(x) that returns x minus one.", "the same function name, another statement"),
    ("Write f(x) that returns x or 1.", "Write f(x) that returns x and 1.", "a small word"),
)  # fmt: skip
# statements that differ in one number: a key too short to keep 2,000 tasks apart gives two of them one key
NUMBERED = [f"Write f(x) that returns x plus {n}." for n in range(2000)]


def _salted(family_key: Callable[[str], object], text: str) -> bool:
    """Did family_key(text) pass a text to the built-in hash(), whose value changes from one process to the next?"""
    import builtins

    real, seen = builtins.hash, []

    def watching(obj: object) -> int:
        if isinstance(obj, (str, bytes)) or (
            isinstance(obj, (tuple, frozenset)) and any(isinstance(x, (str, bytes)) for x in obj)
        ):
            seen.append(obj)
        return real(obj)

    builtins.hash = watching
    try:
        family_key(text)
    finally:
        builtins.hash = real
    return bool(seen)


def _keys(family_key: Callable[[str], object]) -> Callable[..., tuple]:
    """family_key on each text of a case, and whether the first call passed a text to the built-in hash()."""
    return lambda texts, kind: ([family_key(t) for t in texts], _salted(family_key, texts[0]))


def _key_rules(case: Case, got: tuple) -> str | None:
    """A text key, not salted per process; one key for a task's rewordings, apart for different tasks."""
    (texts, kind), (keys, salted) = case.args, got
    bad = next((k for k in keys if not isinstance(k, str) or not k.strip()), None)
    if bad is not None or not keys:
        return f"family_key(...) returned {bad!r}: return a text key (the store keys its episodes by a string)."
    if salted:
        return (
            "family_key hashes the text with the built-in hash(), which Python salts anew in every process "
            "(PYTHONHASHSEED): the next session computes another key and finds none of its memory. Use the words "
            "themselves, or hashlib."
        )
    if kind == "rewordings":
        moved = [name for name, key in zip(REWORDINGS, keys[1:], strict=True) if key != keys[0]]
        return (
            f"flatten's text gets another key when reworded with {' or '.join(moved)}."
            if moved
            else None
        )
    first = {}  # key: the first text given it
    for text, key in zip(texts, keys, strict=True):
        other = first.setdefault(key, text)
        if other != text:
            return (
                f"two different tasks get one key ({case.note}): {other!r} and {text!r}: the key is too loose"
                + (": a key this short cannot keep 2,000 tasks apart; hash the whole normalised text (task_key)."
                   if kind == "numbered" else ".")
            )  # fmt: skip
    return None


def _key_answer(text: str) -> str:
    return task_key(" ".join(re.findall(r"[a-z0-9_]+", text.lower())))


_FLATTEN = get_task("flatten").prompt()
KEYS = Properties(
    "family_key",
    [Case(((_FLATTEN, *(reword(_FLATTEN) for reword in REWORDINGS.values())), "rewordings"),
          "flatten and its rewordings")]
    + [Case(((a, b), "apart"), why) for a, b, why in DISTINCT]
    + [Case((tuple(NUMBERED), "numbered"), "statements that differ in a number"),
       Case((tuple(t.prompt() for t in course_tasks()), "tasks"), "the course tasks")],
    rules=[_key_rules],
    reference=_keys(_key_answer),
    may_ignore=frozenset({1}),  # what the rules read of a case, not the key
)  # fmt: skip


def _recalled(family_key: Callable[[str], object], store: MemoryStore) -> str:
    """What the lesson's store recalls of flatten, asked in upper case, through the learner's key and task_key."""
    text, tasks = _FLATTEN, course_tasks()
    with (
        tempfile.TemporaryDirectory(dir=MEMORY_DISK) as folder,
        MemoryStore(Path(folder) / "family.sqlite") as family,
    ):
        stored = store.history(task_key(text))
        for e in stored:
            family.add(Episode(family_key(text), e.session, e.attempt, e.reflection, e.score))
        reworded = REWORDINGS["upper case"](text)
        recalled = len(family.recall(family_key(reworded), WINDOW))
    plain = len(store.recall(task_key(reworded), WINDOW))
    distinct = len({family_key(t.prompt()) for t in tasks})
    return (
        f"Rewordings share one key, and the {len(tasks)} tasks keep {distinct} keys. Asked in upper case, "
        f"flatten recalls {recalled} lessons through your key: the last {recalled} of the {len(stored)} stored, "
        f"since a recall returns at most the window ({WINDOW}). Through task_key, the exact text, it would "
        f"recall {plain}."
    )


shared_key = KEYS.exercise(
    "05.8",
    "shared_key",
    hints=(
        "normalise the text before you hash it: what differs between the rewordings (case, spacing, punctuation) "
        "must be gone, the words must stay.",
        "keep only what every rewording shares: all the words, lower-cased and in order (a regular expression can "
        "pick them out), then hash what is left with task_key. The first line, or the set of words, throws away "
        "what tells two tasks apart.",
    ),
    passed=_recalled,
    adapt=lambda family_key, *_: _keys(family_key),
)


# ---- the builds: one attempt and its reflection, the loop, the memory ----

ASSERTS = ["assert calculate_factorial(0) == 1", "assert calculate_factorial(3) == 6"]
GOOD = "def calculate_factorial(n):\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n"


def _bad(k: int) -> str:
    return f"def calculate_factorial(n):\n    return {-k}\n"


def _fenced(code: str) -> str:
    return f"```python\n{code}```"


def _verdict(
    score: float, verdict: str = "fail", issues: bool = True, missing: bool = False
) -> str:
    return json.dumps(
        {
            "score": score,
            "verdict": verdict,
            "specific_issues": [f"issue at {score}", "another issue"] if issues else [],
            "missing_elements": [f"missing at {score}"] if missing else [],
        }
    )


def _script(drafts: Sequence[str], verdicts: Sequence[str]) -> dict:
    return dict(
        {
            "generator": [_fenced(d) for d in drafts],
            "evaluator": list(verdicts),
            "reflector": [
                f"\n lesson {i}: calculate_factorial(0) must return 1 \n" for i in range(1, 9)
            ],
            "test_writer": [],
        }
    )


def _package_run(chat, task, asserts, max_attempts=3, window=3, memory=()) -> Run:  # noqa: ANN001
    """The package's Reflexion on a chat: reflections in the prompt, no token budget, no convergence, `memory` the
    lessons an earlier session left."""
    with (
        tempfile.TemporaryDirectory(dir=MEMORY_DISK) as folder,
        MemoryStore(Path(folder) / "memory.sqlite") as store,
    ):
        for i, lesson in enumerate(memory, 1):
            store.add(Episode(task_key(task.prompt()), "earlier", i, lesson, 0.0))
        return Reflexion(
            memory_mode="reflections",
            window=window,
            max_attempts=max_attempts,
            token_budget=None,
            patience=max_attempts,
            tests_for=lambda chat_, task_: list(asserts),
            store=store if memory else None,
        ).run(task, chat)


GOOD_P = "def is_palindrome(text):\n    t = [c.lower() for c in text if c.isalnum()]\n    return t == t[::-1]\n"
ASSERTS_P = [
    "assert is_palindrome('Aba')",
    "assert not is_palindrome('ab')",
    "assert is_palindrome('')",
]


def _attempt_key(chat, task, asserts, reflections, seed):  # noqa: ANN001
    """The answer key in the learner's shape: lesson 05's attempt (its requests are the package's Reflexion's)."""
    messages = generator_messages(attempt_request(task, None, reflections))
    reply = chat(messages, role="generator", **sampling("sampler", seed))
    code = extract_code(reply.text, task.entry_point).code
    evidence = run_self_tests(task, code, asserts)
    ask = evaluator_messages(EVALUATOR_SYSTEM, task, code, evidence.trace())
    said = chat(ask, role="evaluator", **sampling("evaluator", None), max_tokens=400).text
    return code, evidence, parse_judgement(said)


def _reflect_key(chat, task, code, evidence, judged):  # noqa: ANN001
    ask = reflection_messages(task, code, evidence.trace(), judged.feedback or "none named")
    return chat(ask, role="reflector", **sampling("reflector"), max_tokens=300).text.strip()


def _attempts(
    attempt: Callable[..., object], reflect: Callable[..., object]
) -> Callable[..., tuple]:
    """attempt at each seed on a task, given the reflections so far (`earlier`, then reflect's after each attempt
    but the last): each attempt's code, score and verdict, and the reflections written."""

    def run(chat: Chat, task_id: str, asserts: list, seeds: tuple, earlier: tuple = ()) -> tuple:
        task, lessons, made = get_task(task_id), list(earlier), []
        for k, seed in enumerate(seeds):
            out = attempt(chat, task, list(asserts), list(lessons), seed)
            if not (isinstance(out, (tuple, list)) and len(out) == 3):
                raise Wrong(f"attempt returned {show(out)}: return (code, evidence, judgement).")
            code, evidence, judged = out
            if not hasattr(evidence, "trace"):
                raise Wrong("attempt's evidence is not run_self_tests' result (it has no trace()).")
            verdict = (getattr(judged, "detail", None) or {}).get("verdict")
            made.append((code, getattr(judged, "score", "no score"), verdict))
            if k < len(seeds) - 1:
                lessons.append(reflect(chat, task, code, evidence, judged))
        return made, lessons[len(earlier) :]

    return run


def _attempted(got: tuple, want: tuple) -> str | None:
    """The first attempt or reflection that differs from the answer key's, and what it should be."""
    for k, ((code, *judged), (code_w, *judged_w)) in enumerate(
        zip(got[0], want[0], strict=True), 1
    ):
        if code != code_w:
            return f"attempt {k}'s code is {show(code)}: the code extracted from the generator's reply ({show(code_w)})."
        if judged != judged_w:
            return (f"attempt {k}'s judgement has score {judged[0]!r} and verdict {judged[1]!r}: rx.parse_judgement "
                    f"reads the evaluator's reply as score {judged_w[0]!r}, verdict {judged_w[1]!r}.")  # fmt: skip
    for k, (lesson, lesson_w) in enumerate(zip(got[1], want[1], strict=True), 1):
        if lesson != lesson_w:
            return f"reflection {k} is {show(lesson)}: return the reflector's reply text, stripped ({show(lesson_w)})."
    return None


_FIVE = tuple(f"lesson {n}: a made-up lesson" for n in range(1, 6))
_TWO_VERSIONS = (  # a first reply holding a second version: the draft is the first
    "def is_palindrome(text):\n    return False\n```\nOr, shorter:\n```python\n"
    "def is_palindrome(text):\n    return text == text[::-1]\n"
)
ATTEMPT = Calls(
    "attempt and reflect",
    [
        Case((_script([_bad(1), _bad(2), _bad(3), GOOD],
                      ["Score: 2/10", _verdict(0.2, missing=True), _verdict(0.3, issues=False), "Looks fine to me."]),
              "factorial", ASSERTS, (43, 44, 45, 46)),
             "four attempts, after an unreadable verdict, one naming issues and missing elements, one naming nothing, "
             "and prose"),
        Case((_script([_TWO_VERSIONS, GOOD_P], [_verdict(0.1), _verdict(0.9, "pass")]), "palindrome", ASSERTS_P,
              (7, 8)), "a second task, palindrome, whose first reply holds a second version"),
        Case((_script([_bad(4)], [_verdict(0.4)]), "factorial", ASSERTS[:1], (100,), _FIVE),
             "one attempt given 5 reflections: attempt shows them all (the loop picks the window)"),
    ],
    key=_attempts(_attempt_key, _reflect_key),
    result=_attempted,
    forbid=((reflexion_module,), {"run", "_attempts", "_one", "_ask_evaluator", "_reflect"},
            "attempt ran the package's agent: the attempt is yours to write."),
)  # fmt: skip


one_attempt = ATTEMPT.exercise(
    "05.1",
    "one_attempt",
    hints=(
        "attempt: generator_messages(attempt_request(task, None, reflections)) at sampling('sampler', seed); the code "
        "extracted; run_self_tests(task, code, asserts); the evaluator's request evaluator_messages(EVALUATOR_SYSTEM, "
        "task, code, evidence.trace()) at sampling('evaluator', None) with max_tokens=400, read by rx.parse_judgement.",
        "reflect: the issues it is shown are the judgement's feedback (else 'none named'); "
        "reflection_messages(task, code, evidence.trace(), issues) at sampling('reflector') "
        "with max_tokens=300; return the reply's text, stripped.",
    ),
    passed="your attempts and reflections send the package's requests, call for call, on three scripted runs: "
    "four attempts on factorial (an unreadable verdict is a fail with no score), a second task, palindrome, and one "
    "attempt given 5 reflections.",
    adapt=_attempts,
)


def _reflexion_key(chat, task, asserts, max_attempts=3, window=3, memory=()):  # noqa: ANN001
    """The answer key in the learner's shape: (code, stop reason, the reflections this run wrote)."""
    run = _package_run(chat, task, asserts, max_attempts, window, memory)
    return (
        run.final_code,
        run.stop.value,
        [s.reply.strip() for s in run.steps if s.role == "reflector"],
    )


def _loop_outcome(got: object, want: tuple) -> str | None:
    if not (isinstance(got, (tuple, list)) and len(got) == 3):
        return f"my_reflexion returned {show(got)}: return (code, stop reason, the reflections this run wrote)."
    code, reason, written = got
    if (code, reason) != want[:2]:
        returned = (
            "the accepted attempt"
            if want[1] == "accepted"
            else "the best attempt (the earliest of the highest score)"
        )
        same_code = "the same code" if code == want[0] else "another draft"
        return f"you returned {reason!r} and {same_code}; the package stops {want[1]!r} and returns {returned}."
    if not isinstance(written, (list, tuple)) or list(written) != want[2]:
        return f"the reflections this run wrote are {want[2]}; you returned {show(written)}."
    return None


# (the drafts, the evaluator's verdicts, max_attempts, window, memory, what the case shows)
_LOOP_ROWS = (
    ([GOOD], [_verdict(1.0, "pass")], 3, 3, (), "the first attempt accepted"),
    ([_bad(1), GOOD], [_verdict(0.9, "pass"), _verdict(1.0, "pass")], 3, 3, (), "an evaluator's pass that its own tests fail, then accepted"),
    ([_bad(1), _bad(2), _bad(3)], [_verdict(0.2), _verdict(0.3), _verdict(0.4)], 3, 3, (), "three failed attempts, rising scores"),
    ([_bad(1), _bad(2)], [_verdict(0.5), _verdict(0.2)], 3, 3, (), "a drop of over 20%"),
    ([_bad(1), _bad(2)], [_verdict(0.5), "Score: 2/10"], 3, 3, (), "an unreadable verdict after a 0.5"),
    ([_bad(k) for k in range(1, 5)], [_verdict(0.3)] * 4, 4, 1, (), "four equal scores, a window of 1"),
    ([_bad(1), GOOD], [_verdict(0.3), _verdict(1.0, "pass")], 3, 2, ("lesson A", "lesson B", "lesson C"), "three remembered lessons, a window of 2"),
    ([_bad(1), GOOD], [_verdict(0.3), _verdict(1.0, "pass")], 3, 0, ("lesson A",), "a window of 0: no lesson in any prompt"),
    ([GOOD, _bad(1), _bad(2)], [_verdict(0.6), _verdict(0.5), _verdict(0.55)], 3, 3, (), "a draft its tests pass that the evaluator fails"),
    ([_bad(1), GOOD], [_verdict(0.4), _verdict(0.7, "pass")], 3, 3, (), "an evaluator's pass at 0.7 on a draft its tests pass"),
    ([_bad(1), GOOD], [_verdict(0.9), _verdict(0.5, "pass")], 3, 3, (), "an acceptance scored below four fifths of the best"),
    ([_bad(1), _bad(2)], [_verdict(0.5), _verdict(0.2)], 2, 3, (), "a drop of over 20% on the last attempt"),
    ([_bad(1), _bad(2), _bad(3)], [_verdict(0.5), _verdict(0.45), _verdict(0.38)], 3, 3, (), "two small drops, the second below four fifths of the best"),
    ([_bad(1), _bad(2), _bad(3)], [_verdict(0.5), _verdict(0.9), _verdict(0.6)], 3, 3, (), "a drop of over 20% below a best that is not the first"),
    ([_bad(1), _bad(2), _bad(3)], [_verdict(0.5), _verdict(0.4), _verdict(0.45)], 3, 3, (), "a score of exactly four fifths of the best"),
    ([_bad(1), _bad(2), GOOD], [_verdict(0.3), _verdict(0.35), _verdict(0.9, "pass")], 3, 3, ("lesson A: an earlier session", "lesson B: an earlier session"), "a memory of 2 lessons, a window of 3"),
    ([_bad(1), _bad(2), _bad(3)], [_verdict(0.2), _verdict(0.3), _verdict(0.4)], 3, 3, ("lesson A: an earlier session", "lesson B: an earlier session"), "a memory of 2 lessons, three failed attempts"),
    ([_bad(1), _bad(2)], [_verdict(0.5), _verdict(0.2)], 3, 2, ("lesson A: an earlier session",), "a memory of 1 lesson, a drop of over 20%"),
    ([_bad(1), _bad(2)], ["I cannot judge this.", _verdict(0.0)], 2, 3, (), "an unusable verdict first, then a score of 0"),
    (["def is_palindrome(text):\n    return False\n", GOOD_P], [_verdict(0.1), _verdict(1.0, "pass")], 3, 3, (), "palindrome, its own three asserts"),
    ([GOOD, _bad(1)], [_verdict(1.0, "pass"), _verdict(0.3)], 2, 3, (), "no asserts to run: an evaluator's pass on evidence of nothing"),
)  # fmt: skip

LOOP = Calls(
    "my_reflexion",
    [
        Case(
            (
                _script(d, v),
                get_task("palindrome" if d[0] is GOOD_P or "palindrome" in what else "factorial"),
                [] if "no asserts" in what else ASSERTS_P if "palindrome" in what else ASSERTS,
            ),
            what,
            {"max_attempts": a, "window": w, "memory": list(m)},
        )
        for d, v, a, w, m, what in _LOOP_ROWS
    ]
    + [  # nothing but the memory given: the defaults, 3 attempts and a window of 3
        Case(
            (
                _script([_bad(1), _bad(2), _bad(3)], [_verdict(0.2), _verdict(0.3), _verdict(0.4)]),
                get_task("factorial"),
                ASSERTS,
            ),
            "the defaults (3 attempts, a window of 3), four remembered lessons",
            {"memory": ["lesson A", "lesson B", "lesson C", "lesson D"]},
        )
    ],
    key=_reflexion_key,
    result=_loop_outcome,
    after=lambda key_args, my_args, key_kwargs, my_kwargs: (
        None
        if my_kwargs.get("memory") == key_kwargs.get("memory")
        else "my_reflexion changed the memory it was given (the lessons of an earlier session): the caller keeps "
        "them; start your own list from them."
    ),
    forbid=(
        (reflexion_module,),
        {"run", "_attempts", "_one"},
        "my_reflexion ran the package's agent: the loop is yours to write.",
    ),
).register("05.2")


@exercise(
    "05.2",
    hints=(
        "one attempt per pass through a for loop with seed + n; an unusable score counts as 0. Accepted needs the "
        "evaluator's 'pass' and every own test passed (evidence.all_passed). Reflect only when the loop goes on.",
        "after each attempt, in order: accepted? a score below 80% of the best so far (regressed, return the best)? "
        "the last attempt (max_iterations, return the best: the highest score, the earliest among equals)? else reflect, "
        "and keep the last `window` reflections, starting from the last `window` of `memory`.",
    ),
)
def reflexion_loop(my_reflexion: Callable[..., object]) -> tuple[bool, str]:
    """Build 2: the learner's loop against the package's Reflexion on scripted runs, request by request, then its
    `learn` and `accept` decisions on two more."""
    problem = LOOP.problem(my_reflexion) or _decisions_problem(my_reflexion, get_task("factorial"))
    if problem:
        return False, problem
    return True, (
        f"your loop sends the package's requests and stops where it stops on {len(LOOP.cases)} scripted runs, "
        "and its memory entry and its acceptance are the ones it is given."
    )


def _decisions_problem(my_reflexion: Callable[..., object], task: object) -> str:
    """What is wrong with the loop's two handed-in decisions, `learn` and `accept`, or ""."""

    def kept(chat, task, code, evidence, judged):
        return f"KEPT {len(evidence.failed)} failed, score {judged.score}"

    chat = ScriptedChat(_script([_bad(1), GOOD], [_verdict(0.2), _verdict(0.9, "pass")]))
    code, reason, written = my_reflexion(chat, task, list(ASSERTS), max_attempts=2, learn=kept)
    roles = [c.role for c in chat.calls]
    if "reflector" in roles or list(written) != ["KEPT 2 failed, score 0.2"]:
        return (
            f"with learn=... your loop made the calls {roles} and wrote {written!r}: after a failed attempt, the memory "
            "entry is learn(chat, task, code, evidence, judged), and only learn decides whether a model writes it."
        )
    if "KEPT 2 failed, score 0.2" not in chat.calls[2].messages[-1]["content"]:
        return "with learn=..., the next attempt's prompt does not carry the entry learn returned."
    chat = ScriptedChat(
        _script([GOOD] * 3, [_verdict(0.1)] * 3)
    )  # replies enough for a loop that ignores accept
    code, reason, written = my_reflexion(
        chat, task, list(ASSERTS), accept=lambda evidence, judged: evidence.all_passed
    )
    if (reason, len(chat.calls)) != ("accepted", 2):
        return (
            f"with accept=lambda evidence, judged: evidence.all_passed, a draft that passes every own test but that the "
            f"evaluator fails stopped {reason!r} after {len(chat.calls)} calls: it is accepted when accept(evidence, "
            "judged) says so, after its generator and evaluator calls."
        )
    return ""


_DUMP = (  # another process prints every value of every row of every table in the file, as it is
    "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
    "print('\\n'.join(str(v) for (t,) in db.execute(\"SELECT name FROM sqlite_master WHERE type = 'table'\") "
    "for r in db.execute(f'SELECT * FROM \"{t}\"') for v in r))"
)


def _round_trip(
    remember: Callable[..., object], recall: Callable[..., object]
) -> Callable[..., tuple]:
    """The sessions' reflections remembered in files a and b of a new folder, then a recall from a copy of the
    file at another path (so only what is in the file counts; files empty and none hold nothing), made once
    before the last session and once after it, the second returned (a recall reads the file each time); with
    `dump`, the reflections another process finds in each file written."""

    def run(sessions: tuple, ask: tuple, dump: bool = False) -> tuple:
        with tempfile.TemporaryDirectory(dir=MEMORY_DISK) as folder:
            path = lambda name: str(Path(folder) / f"{name}.sqlite")  # noqa: E731
            sqlite3.connect(path("empty")).close()
            asked, key, window = ask
            copy = path("copy")
            for n, (into, task, session, lessons) in enumerate(sessions):
                last = n == len(sessions) - 1
                if last and Path(path(asked)).exists():  # a recall before the last session too
                    shutil.copyfile(path(asked), copy)
                    recall(copy, key, window)
                remember(path(into), task, session, list(lessons))
            found = None
            if dump:
                found = {}
                for file in sorted({s[0] for s in sessions}):
                    out = subprocess.run([sys.executable, "-c", _DUMP, path(file)], capture_output=True,
                                         text=True, timeout=60).stdout  # fmt: skip
                    found[file] = sorted(
                        {x for s in sessions if s[0] == file for x in s[3] if x in out}
                    )
            if Path(path(asked)).exists():
                shutil.copyfile(path(asked), copy)
            got = recall(copy, key, window)
            return list(got) if isinstance(got, (list, tuple)) else got, found

    return run


def _memory_truth(sessions: tuple, ask: tuple, dump: bool = False, wrong: str = "") -> tuple:
    """Every reflection a row, in the order remembered; a recall the last `window` of the key's in that file,
    oldest first. With `wrong`, a misreading: one row per key, the last reflection of each call only, the rows
    ordered by session name, newest first, the first `window`, all for a window of 0, recalled from this process
    rather than the file, or nothing written to the file at all."""
    rows = []  # (file, key, session, reflection), in order
    for file, key, session, lessons in sessions:
        if wrong == "per key":
            rows = [r for r in rows if (r[0], r[1]) != (file, key)]
        rows += [
            (file, key, session, x)
            for x in (lessons[-1:] if wrong in ("last only", "per key") else lessons)
        ]
    if wrong == "by session":
        rows.sort(key=lambda r: r[2])
    file, key, window = ask
    mine = [r[3] for r in rows if r[1] == key and (r[0] == file or wrong in ("process", "no file"))]
    recalled = (
        mine[::-1][:window] if wrong == "newest first"
        else mine[:window] if wrong == "first"
        else mine if wrong == "zero" and window == 0
        else mine[max(0, len(mine) - window) :] if window else []
    )  # fmt: skip
    stored = {
        f: sorted({r[3] for r in rows if r[0] == f}) for f in sorted({s[0] for s in sessions})
    }
    found = None if not dump else {f: [] for f in stored} if wrong == "no file" else stored
    return recalled, found


def _store_remember(db_path: str, key: str, session: str, reflections: list) -> None:
    """Build 5's remember on the package's MemoryStore (a right answer for the generic tests)."""
    with MemoryStore(Path(db_path)) as store:
        start = len(store.history(key))
        for n, reflection in enumerate(reflections):
            store.add(Episode(key, session, start + n, reflection, 0.0))


def _store_recall(db_path: str, key: str, window: int) -> list:
    with MemoryStore(Path(db_path)) as store:
        return [e.reflection for e in store.recall(key, window)]


def _trip_shown(value: object) -> str:
    if isinstance(value, tuple) and value and isinstance(value[0], tuple):
        return "<sessions>"
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], (dict, type(None))):
        return repr(value[0]) + (
            "" if value[1] is None else f" (another process finds {value[1]!r})"
        )
    return show(value)


_S9_10 = (  # session-10 sorts before session-9: the order is the rows'
    ("a", "flatten", "session-9", ("strings are items", "recurse into lists")),
    ("a", "median", "session-9", ("sort first",)),
    ("a", "flatten", "session-10", ("an empty list gives []", "recurse into lists")),
    ("b", "caesar", "s3", ("shift wraps around",)),
)
_THREE = (
    ("a", "roman", "s1", ("IV is 4", "subtract a smaller numeral before a larger")),
    (
        "a",
        "roman",
        "s2",
        ("MCM is 1900:\nroman_to_int('MCM') == 1900", "read left to right", "an empty string is 0"),
    ),
    ("b", "roman", "s2", ("another file's lesson",)),
    ("a", "roman", "s3", ("XL is 40",)),
)
ROUND_TRIP = Values(
    "recall",
    [Case((_S9_10, ("a", "flatten", 3), True), "after two sessions; another process reads each file"),
     Case((_S9_10, ("empty", "flatten", 3)), "another file, with nothing stored: recall reads the file at db_path, "
          "not what this session remembers"),
     Case((_S9_10, ("none", "flatten", 3)), "a file never written")]
    + [Case((_S9_10, ask), "after two sessions") for ask in (
        ("a", "flatten", 10), ("a", "flatten", 5), ("a", "flatten", 1), ("a", "median", 3), ("a", "caesar", 3),
        ("a", "flatten", 0), ("b", "caesar", 3), ("b", "flatten", 3))]
    + [Case((_THREE, ("a", "roman", w), w == 4), "after three sessions and another file's") for w in (2, 4, 6, 7)],
    oracle=_memory_truth,
    answer=_round_trip(_store_remember, _store_recall),
    misreadings=[Misreading(functools.partial(_memory_truth, wrong=wrong), why) for wrong, why in (
        ("no file", "Another process that opens the file finds no reflection in it: remember must write to the "
         "SQLite file at db_path and commit, so that another session can read it."),
        ("process", "recall must read the file at db_path, not what this session remembers."),
        ("per key", "A later write replaced an earlier one (INSERT OR REPLACE, one row per key): memory keeps every "
         "reflection, one row each."),
        ("last only", "remember kept only the last reflection it was given: every one is a row."),
        ("by session", "The order is the rows' (INTEGER PRIMARY KEY), not the session names': session-10 sorts "
         "before session-9."),
        ("newest first", "Select newest first to apply the window, then return them oldest first."),
        ("first", "The window is the last `window` reflections, not the first."),
        ("zero", "A window of 0 recalls nothing: rows[-0:] is every row."),
    )],
    show=_trip_shown,
)  # fmt: skip


memory_round_trip = ROUND_TRIP.exercise(
    "05.5",
    "memory_round_trip",
    hints=(
        "remember opens the file (sqlite3.connect), creates a table if there is none (key, session, reflection, and an "
        "INTEGER PRIMARY KEY that keeps the order), inserts one row per reflection and commits; INSERT OR REPLACE would "
        "keep one row per key and lose the history.",
        "recall selects the key's rows, newest first, LIMIT window, and returns them oldest first; a file or key with "
        "nothing stored, or a window of 0, gives [].",
    ),
    passed="your memory keeps every session's reflections in order and recalls the last `window` of a task's, as the "
    "package's store does, from the file alone.",
    adapt=_round_trip,
)


LESSONS = [
    "calculate_factorial(0) must return 1",
    "use a loop, not recursion",
    "multiply, do not add",
]


def fact_tests(chat: Chat, task: Task) -> list[str]:
    """Exercise 6's asserts for factorial, in place of a test writer."""
    return ["assert calculate_factorial(0) == 1", "assert calculate_factorial(5) == 120"]


def window_chat(needed: tuple[int, ...] = (1, 3), falling: bool = False) -> Chat:
    """Exercise 6's scripted model: its drafts pass the asserts only when the prompt holds lessons 1 and 3 (the
    check also tries one that needs `needed`, other lessons); its reflector says the lessons in order, one per
    failed attempt; with `falling` (the check's too), its evaluator scores each failed draft lower than the last."""
    from reflect.testing import FakeReply

    said, fail_scores = iter(LESSONS + ["no new lesson"] * 5), iter([0.5, 0.3, 0.2, 0.1, 0.1])

    def chat(messages: list[dict], role: str = "generator", **params: object) -> FakeReply:
        prompt = messages[-1]["content"]
        if role == "reflector":
            return FakeReply(next(said))
        if role == "evaluator":
            ok = "Tests failed: none" in prompt
            score = 1.0 if ok else next(fail_scores) if falling else 0.2
            return FakeReply(json.dumps({"score": score, "verdict": "pass" if ok else "fail"}))
        right = all(LESSONS[n - 1] in prompt for n in needed)
        body = "1 if n == 0 else n * calculate_factorial(n - 1)" if right else "n"
        return FakeReply(f"```python\ndef calculate_factorial(n):\n    return {body}\n```")

    return chat


def _window_runs(
    windows: Sequence[int],
    window_chat: Callable[[], Chat],
    tests_for: TestsFor,
    fact: Task,
    **wrong: object,
) -> dict[int, tuple[bool, int]]:
    """What exercise 6 asks for, computed by the check: a fresh scripted model for every window. With `wrong`, a
    misreading: one window for every run, accepted read from the hidden tests, every step counted, 3 attempts."""
    out = {}
    for k in windows:
        run = Reflexion(window=wrong.get("window", k), max_attempts=wrong.get("max_attempts", 4), patience=9,
                        tests_for=tests_for).run(fact, window_chat())  # fmt: skip
        accepted = run.passed if wrong.get("hidden") else run.stop.value == "accepted"
        steps = (
            run.steps
            if wrong.get("every_step")
            else [s for s in run.steps if s.role == "generator"]
        )
        out[k] = (accepted, len(steps))
    return out


@dataclass(frozen=True)
class _Model:
    """Which model window_chat makes for a case: drafts that pass once the prompt holds the lessons `needed`;
    with `falling`, scores that fall after each failed draft."""

    needed: tuple = (1, 3)
    falling: bool = False

    def __repr__(self) -> str:
        said = f"<window_chat(): drafts needing lessons {self.needed[0]} and {self.needed[1]}"
        return said + (", scores falling>" if self.falling else ">")


def _windows(
    measure_windows: Callable[[list[int]], object], given: Callable = None, *_: object
) -> Callable:
    """measure_windows on a case's windows, `window_chat` (the name it reads, in the lesson's namespace and in this
    module's) making the case's model: drafts that pass once the prompt holds the lessons `needed`, scores falling
    after each failed draft with `falling`. What it returns, each pair as a tuple."""

    def run(windows: tuple, model: _Model = _Model()) -> object:
        spaces = [g for g in (getattr(measure_windows, "__globals__", None), globals())
                  if isinstance(g, dict) and g.get("window_chat") is (given or window_chat)]  # fmt: skip
        saved = [g["window_chat"] for g in spaces]
        for g in spaces:
            g["window_chat"] = functools.partial(window_chat, model.needed, model.falling)
        try:
            # the agents it ran, read as other checks read the requests sent
            with called_on(Reflexion, "run") as agents:
                got = measure_windows(list(windows))
        except StopIteration as err:
            raise RuntimeError(
                "a model from window_chat() says its lessons once, and this one had said them already: one "
                "window_chat() served more than one run. Call window_chat() once per run, inside the loop"
            ) from err
        finally:
            for g, old in zip(spaces, saved, strict=True):
                g["window_chat"] = old
        # a patience under max_attempts may stop a run early, though (accepted, attempts) can come out the same
        early = next((a for a in agents if 0 < a.patience < a.max_attempts), None)
        if early is not None:
            raise RuntimeError(
                f"an agent ran with patience={early.patience} and max_attempts={early.max_attempts}: its patience "
                "rule may stop a run before the attempt limit. Give it a patience of 9, so that only acceptance "
                "or the attempt limit stops it"
            )
        return (
            {k: tuple(v) if isinstance(v, list) else v for k, v in got.items()}
            if isinstance(got, dict)
            else got
        )

    return run


def _window_truth(windows: tuple, model: _Model = _Model(), **wrong: object) -> dict:
    made = functools.partial(window_chat, model.needed, model.falling)
    return _window_runs(windows, made, fact_tests, get_task("factorial"), **wrong)


WINDOWS = Values(
    "measure_windows",
    [
        Case(((1, 2, 3, 4),), "the lesson's model: its drafts pass once the prompt holds lessons 1 and 3"),
        Case(((3, 1),), "the windows it is given, in another order"),
        Case(((1, 2, 3), _Model((1, 2))), "another model: run it for each window, do not type in the results"),
        Case(((2, 4), _Model((2, 3))), "another model"),
        Case(((1, 2, 3), _Model(falling=True)), "a model whose scores fall after each failed draft: its runs stop "
             "as regressed, not accepted"),
    ],
    oracle=_window_truth,
    equal=lambda got, want: isinstance(got, dict) and got == want and all(
        isinstance(v, tuple) and type(v[0]) is bool and type(v[1]) is int for v in got.values()),
    misreadings=[Misreading(functools.partial(_window_truth, **wrong), why) for wrong, why in (
        ({"window": 3}, "Every window gave the default window's (3) result: pass window=k to each run."),
        ({"hidden": True}, "accepted is the run's stop reason (r.stop.value == 'accepted'), not the hidden tests' "
         "verdict (r.passed)."),
        ({"every_step": True}, "Count the drafts, the generator steps of r.steps, not every step."),
        ({"max_attempts": 3}, "Run each with max_attempts=4 (and a patience of 9)."),
    )],
    show=lambda v: show(list(v)) if isinstance(v, tuple) else repr(v) if isinstance(v, _Model) else show(v),
)  # fmt: skip


memory_window = WINDOWS.exercise(
    "05.6",
    "memory_window",
    hints=(
        "one run per window: rx.Reflexion(...) takes window, max_attempts, patience and tests_for as keyword "
        "arguments, and its .run(task, chat) returns a Run; collect one entry per k in a dict.",
        "accepted is the run's stop reason (r.stop.value), not the hidden tests' verdict (r.passed); attempts count "
        "the drafts, the generator steps in r.steps, not every step.",
    ),
    passed=lambda fn, *data: (
        f"{_windows(fn, *data)((1, 2, 3, 4))}: a window of 1 or 2 forgets the first lesson by attempt 4; 3 or "
        "more keeps both, and the fourth attempt is accepted."
    ),
    adapt=_windows,
)


def _run(task_id: str, drafts: list[str], final: str, mode: str) -> Run:
    """A made-up run of one of the experiment's modes (its name as the recording's): one generator step per draft."""
    from reflect.records import Step, Stop

    steps = tuple(Step(i, "generator", "model", code=d) for i, d in enumerate(drafts))
    return Run(
        strategy=mode, task_id=task_id, final_code=final, stop=Stop.MAX_ITERATIONS, steps=steps
    )


def _found(runs: Sequence[Run], hidden: Callable[[str, str], bool]) -> tuple[int, int, int, int]:
    found = sum(any(hidden(r.task_id, d) for d in r.drafts) for r in runs)
    returned = sum(bool(hidden(r.task_id, r.final_code)) for r in runs)
    retries = [(a, b) for r in runs for a, b in zip(r.drafts, r.drafts[1:], strict=False)]
    return found, returned, sum(a == b for a, b in retries), len(retries)


def _right(*pairs: tuple[str, str]) -> Callable[[str, str], bool]:
    return lambda task_id, code: (task_id, code) in set(pairs)


FOUND = Values(
    "drafts_found",
    [  # each case one mode's runs, named as the recording names them: counts typed in per mode meet them too
        Case(([_run(t, d, f, mode) for t, d, f in runs], _right(*right)), note)
        for mode, runs, right, note in (
            ("reflexion:none", [("a", ["x = 1", "x = 2", "x = 1"], "x = 2"), ("b", ["y = 1", "y = 1 "], "y = 1")],
             [("a", "x = 2")], "drafts A, B, A; and a draft with a trailing space"),
            ("reflexion:reflections", [("a", ["x = 1", "x = 2"], "x = 1"), ("c", ["z", "z", "z"], "z")],
             [("a", "x = 2"), ("c", "z")], "a right second draft not returned; the same draft three times"),
            ("reflexion:last", [("e", ["v = 1", "v = 2", "v = 3"], "v = 3")], [("e", "v = 1")],
             "only the first draft right, and not returned"),
            ("reflexion:last+reflections", [("d", ["w = 0"], "w = 0")], [], "one run, one draft, nothing right"),
            ("reflexion:none", [("f", ["u = 1", "u = 2 ", "u = 2"], "u = 2")], [("f", "u = 2")],
             "a retry that differs from the draft before it by a trailing space only"),
            ("reflexion:reflections", [("g", ["t = 1", "t = 2", "t = 3", "t = 2"], "t = 3")], [],
             "drafts A, B, C, B: a retry like an earlier draft, not the one just before"),
        )
    ],
    oracle=_found,
    misreadings=[
        Misreading(
            lambda runs, hidden: (
                sum(bool(hidden(r.task_id, r.drafts[0])) for r in runs),
                *_found(runs, hidden)[1:],
            ),
            "found counts a task when any of its drafts passes, not only its first.",
        ),
        Misreading(
            lambda runs, hidden: (
                _found(runs, hidden)[0],
                sum(bool(hidden(r.task_id, r.drafts[-1])) for r in runs),
                *_found(runs, hidden)[2:],
            ),
            "returned reads the run's final_code, the draft the loop returned, not its last attempt.",
        ),
        Misreading(
            lambda runs, hidden: (
                *_found(runs, hidden)[:2],
                sum(d == r.drafts[0] for r in runs for d in r.drafts[1:]),
                _found(runs, hidden)[3],
            ),
            "an identical retry repeats the draft just before it, not the first.",
        ),
        Misreading(
            lambda runs, hidden: (
                *_found(runs, hidden)[:2],
                sum(d in r.drafts[:i] for r in runs for i, d in enumerate(r.drafts) if i),
                _found(runs, hidden)[3],
            ),
            "an identical retry repeats the draft just before it, not any earlier one.",
        ),
        Misreading(
            lambda runs, hidden: (
                *_found(runs, hidden)[:2],
                sum(a.strip() == b.strip() for r in runs for a, b in zip(r.drafts, r.drafts[1:], strict=False)),
                _found(runs, hidden)[3],
            ),
            "Compare a retry with the draft before it byte for byte: a trailing space makes another draft.",
        ),
    ],
    show=lambda v: (
        f"<{len(v)} runs>"
        if isinstance(v, list) and v and isinstance(v[0], Run)
        else ("<hidden>" if callable(v) else show(v))
    ),
)  # fmt: skip


written_or_returned = FOUND.exercise(
    "05.4",
    "written_or_returned",
    hints=(
        "found: a task counts when any of its run's drafts passes hidden(task_id, code); returned: when its final_code "
        "does; a retry is each pair (draft before, draft) in a run, in order.",
        "return the four counts as a tuple: (found, returned, identical retries, retries); compare a retry with the "
        "draft just before it (zip(r.drafts, r.drafts[1:])), byte for byte.",
    ),
    lesson=lambda by, hidden: [
        Case((list(runs), hidden), f"the {mode} runs")
        for mode, runs in by.items()
        if mode != "one-shot"
    ],
    passed="your counts match on every mode's runs: where a correct draft was written but not returned, the loop's "
    "choice cost the task.",
)


VERDICT_REPLIES = (
    '{"score": 0.8, "verdict": "pass", "specific_issues": [], "missing_elements": []}',
    '```json\n{"score": 0.2, "verdict": "fail", "specific_issues": ["x"]}\n```',
    'Here it is: {"score": 1, "verdict": "pass"} and that is all.',
    '{"score": 7, "verdict": "fail"}',
    '{"score": true, "verdict": "pass"}',
    '{"score": 0.5, "verdict": "maybe"}',
    '{"score": "0.5", "verdict": "pass"}',
    '{"verdict": "fail"} then {"score": 0.4, "verdict": "fail"}',
    '{"score": 0.6, "verdict": "fail", "specific_issues": ["the loop',
    "Score: 2/10. The function fails on nested lists.",
    "Looks fine to me.",
    "",
    '[{"score": 0.9, "verdict": "pass"}]',
    '{"outer": {"score": 0.3, "verdict": "fail"}}',
    '{"score": 0.1, "verdict": "fail"} and later {"score": 0.9, "verdict": "pass"}',
    '{"score": 0, "verdict": "fail"}',
    '{"score": -0.5, "verdict": "fail"}',
    '{"score": 0.5, "verdict": "PASS"}',
    '{"score": 0.7, "verdict": "pass", "detail": {"n": 1}}',  # an object inside the verdict
    '```json\n{"score": 0.3, "verdict": "fail", "specific_issues": ["returns {} for []"]}\n```',
    '{"meta": {"score": 0.2, "verdict": "fail"}, "score": 0.9, "verdict": "pass"}',
    '{"score": NaN, "verdict": "pass"}',  # json.loads reads NaN and Infinity, which no range test lets through
    '{"score": Infinity, "verdict": "fail"}',
    "{'score': 0.5, 'verdict': 'pass'}",  # a Python literal, not JSON
)


def _judgement(reply: str) -> tuple[float, str] | None:
    j = parse_judgement(reply)
    return None if j.score is None else (j.score, j.detail["verdict"])


VERDICT = Values(
    "read_verdict",
    [Case((r,)) for r in VERDICT_REPLIES],
    oracle=_judgement,
    equal=lambda got, want: (
        (got is None and want is None)
        or (
            want is not None
            and isinstance(got, (tuple, list))
            and len(got) == 2
            and isinstance(got[0], float)
            and tuple(got) == want
        )
    ),
    misreadings=[
        Misreading(
            lambda r: _judgement(r) or (0.0, "fail"),
            "An unusable reply is None, never a default verdict: a default hides the failure.",
        ),
    ],
    forbid=(
        (reflexion_module,),
        {"parse_judgement"},
        "read_verdict called rx.parse_judgement: the reading is yours to write.",
    ),
)


loud_verdict = VERDICT.exercise(
    "05.3",
    "loud_verdict",
    hints=(
        "try json.JSONDecoder().raw_decode(text, i) at every '{' in the reply, in order; the first object that "
        "validates wins, and a reply with none gives None.",
        "validate: a dict, its score an int or float but not a bool, from 0 to 1, its verdict 'pass' or 'fail'; "
        "return (float(score), verdict).",
    ),
    passed=(
        f"your reading agrees with rx.parse_judgement on all {len(VERDICT_REPLIES)} replies: an unusable one is None, "
        "never a default."
    ),
)


# --- Build 2b (05.9): what memory keeps of a failed attempt, graded by what it holds. ------------------

# (task, a failed attempt's code, its failed asserts with what came back, the asserts it passed)
KEEP_CASES = (
    (
        "flatten",
        "def flatten(nested):\n    result = []\n    for item in nested:\n        if isinstance(item, list):\n"
        "            result.extend(flatten(item))\n    return result\n",
        [
            ("assert flatten([1, [2]]) == [1, 2]", "[2]"),
            ("assert flatten(['ab']) == ['ab']", "[]"),
            ("assert flatten([1, [2, [3, [4, [5, [6]]]]]]) == [1, 2, 3, 4, 5, 6]", "[1]"),
        ],
        ["assert flatten([]) == []"],
    ),
    (
        "factorial",
        "def calculate_factorial(n):\n    total = n * (n - 1)\n    return total\n",
        [("assert calculate_factorial(0) == 1", "0")],
        ["assert calculate_factorial(2) == 2", "assert calculate_factorial(3) == 6"],
    ),
)


def _call_and_expected(assertion: str) -> tuple[str, ...]:
    """What an entry must hold of a failed assert, however it words it: the call and the expected value."""
    left, _, right = assertion.removeprefix("assert ").partition(" == ")
    return (left.strip(), right.strip()) if right else (left.strip(),)


def _code_lines(code: str) -> list[str]:
    """The attempt's lines that only its code would hold (not a def line, which the task names too)."""
    return [
        ln.strip()
        for ln in code.splitlines()
        if len(ln.strip()) > 8 and not ln.strip().startswith("def ")
    ]


def _entry(
    keep: Callable[..., object], task_id: str, code: str, failed: list, passed: list, pasted: str
) -> object:
    """keep's entry for a made-up failed attempt, its reflector scripted to paste the code back (`pasted`); REAL_CALL
    where keep reached a real model."""
    from reflect.judging.self_tests import SelfTestResult

    reflector = ScriptedChat({"reflector": [pasted] * 2})
    evidence = SelfTestResult(list(passed), list(failed))
    judged = parse_judgement(_verdict(0.2))
    reached, entry = offline(lambda: keep(reflector, get_task(task_id), code, evidence, judged))
    return REAL_CALL if reached else entry


def _entry_problem(case: Case, entry: object) -> str | None:
    """What is wrong with keep's entry on a made-up failed attempt, or None."""
    task_id, code, failed, passed, _ = case.args
    if entry is REAL_CALL:
        return "keep called the real model instead of the `chat` it was given."
    if not isinstance(entry, str) or not entry.strip():
        return f"keep returned {entry!r}: return the memory entry, a non-empty text."
    missing = [a for a, _ in failed if any(part not in entry for part in _call_and_expected(a))]
    if missing:
        return (
            f"on {task_id} the entry does not carry the failed check {missing[0]!r} (its call and expected value, in any "
            "words): the next attempt cannot avoid "
            f"what memory does not say. The entry was: {entry[:160]!r}"
        )
    ran = {a for a, _ in failed} | set(passed)
    hidden = [
        ln.strip()
        for ln in get_task(task_id).tests.splitlines()
        if ln.strip().startswith("assert ")
        and ln.strip() not in ran
        and ln.strip().removeprefix("assert ") in entry
    ]
    if hidden:
        return (
            f"on {task_id} the entry carries a hidden test the agent never ran ({hidden[0]!r}): the hidden tests only "
            "judge the result; memory keeps what the attempt's own evidence said."
        )
    copied = [ln for ln in _code_lines(code) if ln in entry]
    if copied:
        return (
            f"on {task_id} the entry carries the attempt's code ({copied[0]!r}): a fresh attempt shown its old code "
            "mostly writes it again (lesson 05 section 2). Leave the code out, even when a model wrote it into a reflection."
        )
    return None


def _failed_checks(chat: object, task: Task, code: str, evidence: object, judged: object) -> str:
    """A right answer: every failed check with what came back, from the evidence alone."""
    return "these checks failed: " + "; ".join(f"{a} (got {out})" for a, out in evidence.failed)


KEEP = Properties(
    "keep",
    [
        Case((task_id, code, failed, passed, pasted))
        for task_id, code, failed, passed in KEEP_CASES
        for pasted in (
            f"The draft is wrong. Fixed:\n```python\n{code}```",
            f"The fix keeps this:\n{code}",
        )
    ],
    rules=[_entry_problem],
    reference=lambda *case: _entry(_failed_checks, *case),
    # the entry can be made from the failed checks alone (no task, code, model)
    may_ignore=frozenset({0, 1, 3, 4}),
)
memory_entry = KEEP.exercise(
    "05.9",
    "memory_entry",
    hints=(
        "keep(chat, task, code, evidence, judged) returns a text. evidence.failed is a list of (assert, what came "
        "back): put each failed assert in it. The attempt's code stays out.",
        "no model is needed: 'these checks failed: ' + '; '.join(f'{a} (got {out})' for a, out in evidence.failed). "
        "If you ask the reflector instead, strip every line of code from its reply.",
    ),
    passed="On 2 made-up failed attempts your entry carried every failed check and none of the code.",
    adapt=lambda keep: lambda *case: _entry(keep, *case),
)
