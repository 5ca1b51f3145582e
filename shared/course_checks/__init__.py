"""Exercise checks, one module per lesson (`lesson00` ... `lesson06`); a check cell is one call.

    from course_checks import lesson00 as ex
    ex.vowels(only_a_number, answer)       # the check cell: what the learner built, passed explicitly
    ex.vowels.reveal()                     # the solution cell, printed only when the learner asks for it

A check reads only its arguments, so no global that a later cell rebinds can change its verdict.
It prints ✅ and what the learner got, or "❌ Not yet", what is wrong and the next hint. Hints come
one per failed run of the same exercise, counted by the exercise's key (not by the hint's text,
so a message that names the learner's output never restarts the count). No check prints the
answer: after the last hint it says how to ask for it, and `reveal()` prints it.

A check that fails on a step its message fully explains (the function is right, the model was not
called yet) returns `(False, message, False)`: the message is printed with no hint, and the hint count
does not move, so the hints stay about the part they help with.

An exception in the learner's code is a "Not yet" that names it, never a crash; a `ReplayMiss`
(a `BaseException`) still stops the cell, as it must.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from course_runtime.client import Connection


class RealModelCalled(Exception):
    """A function under check reached the real model while it should only use the stand-in chat it was given."""


@contextmanager
def model_off() -> Iterator[None]:
    """While a check tries the learner's function on a stand-in chat, a call that reaches any real connection
    (conn.chat, or a chat made from it) raises `RealModelCalled` before its request is sent: no model time
    spent live, no replay miss in replay, and nothing added to the ledger."""

    def refuse(*_: object, **__: object) -> None:
        raise RealModelCalled

    sender = Connection.__dict__["_create"]
    Connection._create = refuse  # every request of every connection goes through _create
    try:
        yield
    finally:
        Connection._create = sender


def offline(call: Callable[[], object]) -> tuple[bool, object]:
    """`call()` with every real model off: (True, None) if it reached one, else (False, what it returned)."""
    with model_off():
        try:
            return False, call()
        except RealModelCalled:
            return True, None


SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"
# a folder in memory where the machine has one, for the SQLite files checks write (their commits wait for a disk)
MEMORY_DISK = "/dev/shm" if Path("/dev/shm").is_dir() and os.access("/dev/shm", os.W_OK) else None


def solution_cell(key: str) -> str:
    """The source of the solved cell of exercise `key` in solutions/ (its `metadata.reflect.key`)."""
    lesson = key.split(".")[0]
    for path in sorted(SOLUTIONS.glob(f"{lesson}_*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell.get("metadata", {}).get("reflect", {}).get("key") == key:
                return "".join(cell["source"])
    raise LookupError(f"no solved cell of exercise {key} in {SOLUTIONS}")


def package_calls(call: Callable[[], object], *modules: object) -> tuple[set[str], object]:
    """Run `call()` and note which functions of the given package modules it reached (by name):
    a check refuses an answer that calls the package's own version of what the learner writes."""
    import sys

    files = {getattr(m, "__file__", None) for m in modules} - {None}
    reached: set[str] = set()

    def watch(frame, event, _arg):  # noqa: ANN001 - sys.setprofile's signature
        if event == "call" and frame.f_code.co_filename in files:
            reached.add(frame.f_code.co_name)

    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        result = call()
    finally:
        sys.setprofile(previous)
    return reached, result


@contextmanager
def called_on(cls: type, method: str) -> Iterator[list]:
    """The instances of `cls` whose `method` runs inside the block, in order (the method itself still runs): what a
    learner's function asked of the package (the agents it ran, the critic that judged), read as its requests are."""
    seen, real = [], getattr(cls, method)

    def counted(instance: object, *args: object, **kwargs: object) -> object:
        seen.append(instance)
        return real(instance, *args, **kwargs)

    setattr(cls, method, counted)
    try:
        yield seen
    finally:
        setattr(cls, method, real)


def later(message: str) -> tuple[bool, str, bool]:
    """A fail its message fully explains (the function is right, a later step is not done yet): no hint shown."""
    return False, message, False


def short(value: object, width: int = 70) -> str:
    """`value` on one line, cut to `width` characters, quoted: what a check's message shows of a learner's text."""
    text = " ".join(str(value).split())
    return repr(text if len(text) <= width else text[: width - 3] + "...")


_tiers: dict[str, int] = {}
REGISTRY: dict[str, Exercise] = {}


@dataclass(frozen=True)
class Outcome:
    """What a check cell printed: the verdict, the message, and how many hints it showed."""

    key: str
    passed: bool
    message: str
    hints_shown: int
    text: str


class Exercise:
    """One exercise: its key ("00.1"), its hints (gentlest first) and its check; its answer is the
    solved cell in solutions/ (`solution_cell`), so no answer is written twice."""

    def __init__(self, key: str, hints: tuple[str, ...], check: Callable[..., tuple]) -> None:
        if not hints:
            raise ValueError(f"exercise {key} needs at least one hint")
        self.key, self.hints, self.check = key, tuple(hints), check
        self.name = check.__name__
        self.__doc__ = check.__doc__
        functools.update_wrapper(self, check)

    def evaluate(self, *args, **kwargs) -> tuple[bool, str, bool]:
        """Run the check on the learner's objects: (passed, message, whether a hint helps); the learner's
        exception is a fail that a hint helps with."""
        try:
            passed, message, *hint = self.check(*args, **kwargs)
        except Exception as err:  # noqa: BLE001 - the learner's code may not run yet
            return False, f"your code raised {type(err).__name__}: {err}", True
        return bool(passed), message, bool(hint[0]) if hint else True

    def __call__(self, *args, **kwargs) -> None:
        """The check cell: print the verdict and, when it is not there yet, the next hint. Under a grader
        (NBGRADER_EXECUTION, set by `nbgrader autograde`) it prints the graded verdict (`grade`) and raises
        AssertionError when it fails, which is how nbgrader fails a test cell."""
        if os.environ.get("NBGRADER_EXECUTION"):
            passed, message = self.grade(*args, **kwargs)
            print(f"{'✅' if passed else '❌'} {message}")
            if not passed:
                raise AssertionError(f"exercise {self.key} ({self.name}): {message}")
            return
        outcome = self.outcome(*args, **kwargs)
        print(outcome.text)

    def grade(self, *args, **kwargs) -> tuple[bool, str]:
        """What a grader counts: the learner's functions on the exercise's specs alone (made-up cases and scripted
        models, so a learner's own prompts and the model's replies cost nothing)."""
        from .spec import SPECS

        specs = SPECS[self.key]
        functions = [a for a in args if callable(a)]
        for i, spec in enumerate(specs):
            fn = next((f for f in functions if getattr(f, "__name__", None) == spec.name), None)
            if fn is None and i < len(functions):
                fn = functions[i]
            if fn is None:
                return False, f"{spec.name} is not written yet."
            try:
                problem = spec.problem(spec.adapt(*args) if spec.adapt else fn)
            except Exception as err:  # noqa: BLE001 - the learner's code may not run yet
                problem = f"{spec.name} raised {type(err).__name__}: {err}"
            if problem:
                return False, problem
        return True, f"graded on {sum(len(s.cases) for s in specs)} made-up and scripted cases."

    def outcome(self, *args, **kwargs) -> Outcome:
        """Grade and advance the hint count; return what the check cell prints."""
        passed, message, hint = self.evaluate(*args, **kwargs)
        if passed:
            _tiers.pop(self.key, None)
            return Outcome(self.key, True, message, 0, f"✅ {message}")
        if not hint:
            return Outcome(self.key, False, message, 0, f"❌ Not yet. {message}")
        tier = min(_tiers.get(self.key, 0) + 1, len(self.hints))
        _tiers[self.key] = tier
        lines = [f"❌ Not yet. {message}".rstrip()]
        for n in range(tier):
            lines.append(f"Hint {n + 1} of {len(self.hints)}: {self.hints[n]}")
        if tier < len(self.hints):
            lines.append("(Run this cell again for the next hint.)")
        else:
            lines.append(
                f"(Still stuck? `ex.{self.name}.reveal()` in a new cell prints the answer.)"
            )
        return Outcome(self.key, False, message, tier, "\n".join(lines))

    @property
    def scripted(self) -> bool:
        """Graded offline: the check is a spec (it runs the learner's functions on made-up cases and scripted
        models)."""
        from .spec import SPECS

        return self.key in SPECS

    def reveal(self) -> None:
        """Print the answer, the solved cell: only when the learner asks for it."""
        print(f"Exercise {self.key}, an answer:\n{solution_cell(self.key)}")

    def __repr__(self) -> str:
        return f"<exercise {self.key}: {self.name}>"


def exercise(key: str, hints: tuple[str, ...]) -> Callable[[Callable[..., tuple]], Exercise]:
    """Register a check `(learner's objects) -> (passed, message[, hint helps])` as exercise `key`."""

    def wrap(check: Callable[..., tuple]) -> Exercise:
        if key in REGISTRY:
            raise ValueError(f"exercise {key} is registered twice")
        ex = Exercise(key, hints, check)
        REGISTRY[key] = ex
        return ex

    return wrap


def reset_hints() -> None:
    """Start every exercise's hints at the first one again."""
    _tiers.clear()


def _guard_unfinished_builds() -> None:
    """Inside IPython, a cell that fails on an unfinished build says so in one line (`unfinished`)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and hasattr(shell, "set_custom_exc"):
        from .unfinished import install

        install(shell)


_guard_unfinished_builds()
