"""Lesson 05's exercise checks: the memory window, vague reflections, one memory key for rewordings of a task."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from reflect.memory.store import Episode, MemoryStore, task_key
from reflect.strategies.reflexion import Reflexion
from reflect.tasks.task import Task, course_tasks, get_task

from . import exercise

Chat = Callable[..., object]
TestsFor = Callable[[Chat, Task], list[str]]


def _window_runs(
    windows: Sequence[int], window_chat: Callable[[], Chat], tests_for: TestsFor, fact: Task
) -> dict[int, tuple[bool, int]]:
    """What exercise 1 asks for, computed by the check: a fresh scripted model for every window."""
    out = {}
    for k in windows:
        run = Reflexion(window=k, max_attempts=4, patience=9, tests_for=tests_for).run(
            fact, window_chat()
        )
        out[k] = (run.stop.value == "accepted", sum(s.role == "generator" for s in run.steps))
    return out


def _call_windows(
    measure_windows: Callable[[list[int]], object], windows: list[int]
) -> tuple[object, str]:
    """(the learner's result, "" or what went wrong, said fully enough that no hint is needed)."""
    try:
        return measure_windows(list(windows)), ""
    except StopIteration:
        return None, (
            f"measure_windows({windows}) raised StopIteration inside window_chat: a model from "
            "window_chat() says its three lessons once, and this one had said them already, so one "
            "window_chat() served more than one run. Call window_chat() once per run, inside the loop."
        )


@exercise(
    "05.1",
    hints=(
        "one run per window: rx.Reflexion(...) takes window, max_attempts, patience and tests_for as keyword "
        "arguments, and its .run(task, chat) returns a Run; collect one entry per k in a dict.",
        "accepted is the run's stop reason (r.stop.value), not the hidden tests' verdict (r.passed); attempts count "
        "the drafts, the generator steps in r.steps, not every step.",
    ),
)
def memory_window(
    measure_windows: Callable[[list[int]], object],
    window_chat: Callable[[], Chat],
    fact: Task,
    fact_tests: TestsFor,
) -> tuple[bool, str] | tuple[bool, str, bool]:
    """Exercise 1: measure_windows([1, 2, 3, 4]) and ([3, 1]) against runs the check makes itself."""
    windows = [1, 2, 3, 4]
    want = _window_runs(windows, window_chat, fact_tests, fact)
    got, problem = _call_windows(measure_windows, windows)
    if problem:
        return False, problem, False
    if not isinstance(got, dict) or sorted(got, key=repr) != sorted(windows, key=repr):
        return False, (
            f"measure_windows({windows}) returned {got!r}: expected a dict with one entry per window, "
            "{k: (accepted, attempts)}."
        )
    for k in windows:
        v = got[k]
        if not (
            isinstance(v, (tuple, list))
            and len(v) == 2
            and isinstance(v[0], bool)
            and isinstance(v[1], int)
            and not isinstance(v[1], bool)
        ):
            return (
                False,
                (
                    f"for window {k} you returned {v!r}: each value is a pair (accepted: a bool, "
                    "attempts: an int)."
                ),
                not isinstance(v, (tuple, list)),
            )
    got = {k: tuple(got[k]) for k in windows}
    if got != want:
        accepted, attempts = [got[k][0] for k in windows], [got[k][1] for k in windows]
        default = Reflexion().window
        if (
            default in want
            and len(set(want.values())) > 1
            and all(got[k] == want[default] for k in windows)
        ):
            return (
                False,
                (
                    f"every window gave {want[default]}, the result of the default window ({default}), yet "
                    f"the runs differ by window: {want}. Pass window=k to each run."
                ),
                False,
            )
        wrong = []
        if accepted != [want[k][0] for k in windows]:
            why = ""
            shown = [k for k in windows if want[k][0]]
            if not any(accepted) and shown:
                names = " and ".join(str(k) for k in shown)
                why = (
                    f" None of yours is accepted, yet the runs with window{'s' if len(shown) > 1 else ''} {names} "
                    "stopped with 'accepted'. If you read accepted from r.passed, that is the hidden tests, which "
                    "these drafts fail. If your runs never stop as accepted, check that each run takes its "
                    "asserts from fact_tests (r.show() lists them)."
                )
            wrong.append(
                f"accepted for windows {windows}: you returned {accepted}; the runs stopped with 'accepted': "
                f"{[want[k][0] for k in windows]}.{why}"
            )
        if attempts != [want[k][1] for k in windows]:
            wrong.append(
                f"attempts: you returned {attempts}, the runs made {[want[k][1] for k in windows]} attempts "
                "(one draft each)."
            )
        return False, " ".join(wrong)
    again, problem = _call_windows(measure_windows, [3, 1])
    if problem or again != _window_runs([3, 1], window_chat, fact_tests, fact):
        return (
            False,
            (
                problem
                or f"right for [1, 2, 3, 4], but measure_windows([3, 1]) returned {again!r}: "
                "measure the windows it is given."
            ),
            False,
        )
    return True, (
        f"{got}: a window of 1 or 2 forgets the first lesson by attempt 4; 3 or more keeps both, "
        "and the fourth attempt is accepted."
    )


LABELLED = {  # a reflection: (worth remembering, why)
    "flatten([[1, [2]]]) returned [1, [2]]: recurse into every list, not only the first level.": (
        True,
        "names a call",
    ),
    "running_average([]) raised UnboundLocalError; set total = 0 before the loop.": (
        True,
        "names a call",
    ),
    "The caesar shift must wrap: 'z' shifted by 1 is 'a', so take the offset modulo 26.": (
        True,
        "names values",
    ),
    "Improve the code quality and be more careful next time.": (False, "names nothing concrete"),
    "Handle the edge cases properly and think about the requirements.": (
        False,
        "names nothing concrete",
    ),
    "Fix the bug.": (False, "shorter than 8 words"),
    "f([]) returned None.": (False, "shorter than 8 words"),
    "Here is the fix:\n```python\ndef flatten(nested):\n    return sum(nested, [])\n```": (
        False,
        "carries code",
    ),
    "The function should def flatten(x) recursively and return [1, 2] for [[1], [2]].": (
        False,
        "carries a def",
    ),
}


@exercise(
    "05.2",
    hints=(
        "three tests in order: does it carry code (a ``` fence, or 'def name(')? is it shorter than 8 words? "
        "does it name something concrete?",
        "len(text.split()) counts words; a concrete anchor is a call like f([]), a digit, a quoted value or []: "
        "one re.search with alternatives finds any of them.",
    ),
)
def specific(is_specific: Callable[[str], object], reflections: Sequence[str]) -> tuple[bool, str]:
    """Exercise 2: is_specific on labelled reflections, then how many of the experiment's it keeps."""
    got = {text: is_specific(text) for text in LABELLED}
    if all(v is None for v in got.values()):
        return False, "is_specific returned None for every reflection: return True or False."
    wrong = [
        f"{text[:40]!r}... should be {want} ({why})"
        for text, (want, why) in LABELLED.items()
        if bool(got[text]) is not want
    ]
    if wrong:
        return (
            False,
            f"{len(wrong)} of {len(LABELLED)} labelled reflections sorted wrong: "
            + "; ".join(wrong),
        )
    kept = sum(bool(is_specific(t)) for t in reflections)
    return True, (
        f"All {len(LABELLED)} labelled reflections sorted right. It keeps {kept} of the experiment's "
        f"{len(reflections)} real reflections."
    )


# the reflections a prompt carries: Reflexion's default window, what a recall returns at most
WINDOW = 3
REWORDINGS = {
    "upper case": str.upper,
    "doubled spaces and a newline": lambda t: "  " + t.replace(" ", "  ") + "\n",
    "no full stops": lambda t: t.replace(".", ""),
    "no commas or colons": lambda t: t.replace(",", "").replace(":", ""),
}


@exercise(
    "05.3",
    hints=(
        "normalise the text before you hash it: what differs between the rewordings (case, spacing, punctuation) "
        "must be gone, the words must stay.",
        "keep only what every rewording shares: the words, lower-cased and in order (a regular expression can pick "
        "them out), then hash what is left with task_key.",
    ),
)
def shared_key(family_key: Callable[[str], object], store: MemoryStore) -> tuple[bool, str]:
    """Exercise 3: one key for rewordings of flatten, 18 keys for the 18 course tasks, then a recall through it."""
    flatten = get_task("flatten")
    text = flatten.prompt()
    key = family_key(text)
    if not isinstance(key, str) or not key.strip():
        return (
            False,
            f"family_key(...) returned {key!r}: return a text key (the store keys its episodes by a string).",
        )
    moved = [name for name, reword in REWORDINGS.items() if family_key(reword(text)) != key]
    if moved:
        return False, f"flatten's text gets another key when reworded with {' or '.join(moved)}."
    tasks = course_tasks()
    by_key: dict[object, list[str]] = {}
    for t in tasks:
        by_key.setdefault(family_key(t.prompt()), []).append(t.id)
    shared = [ids for ids in by_key.values() if len(ids) > 1]
    if shared:
        return False, (
            f"the {len(tasks)} course tasks get only {len(by_key)} distinct key(s); these share one: "
            f"{shared[0][:4]}{' ...' if len(shared[0]) > 4 else ''}: the key is too loose."
        )
    with MemoryStore(Path(tempfile.mkdtemp()) / "family.sqlite") as family:
        stored = store.history(task_key(text))
        for e in stored:
            family.add(Episode(key, e.session, e.attempt, e.reflection, e.score))
        reworded = REWORDINGS["upper case"](text)
        recalled = len(family.recall(family_key(reworded), WINDOW))
    plain = len(store.recall(task_key(reworded), WINDOW))
    return True, (
        f"Rewordings share one key, and the {len(tasks)} tasks keep {len(by_key)} keys. Asked in upper case, "
        f"flatten recalls {recalled} lessons through your key: the last {recalled} of the {len(stored)} stored, "
        f"since a recall returns at most the window ({WINDOW}). Through task_key, the exact text, it would "
        f"recall {plain}."
    )
