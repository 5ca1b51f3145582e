"""A check is a short spec of one of three kinds, each graded on cases the spec makes:

- `Values`: the learner's function gives the oracle's value on every case (an oracle that raises: the same kind
  of error), and leaves its arguments as they were. Where it does not, the first `Misreading` (a wrong reading a
  learner may take) that behaves as the function did on every case tried names the mistake; otherwise the
  message says what was expected and what came back. Cases from the lesson's own data (`also`) come last, one by
  one, once the made-up ones pass.
- `Properties`: every rule holds of what the learner's function returns on every case (the cases are made up
  where many answers are right, such as what a request may say).
- `Calls`: on scripted runs (a `ScriptedChat` script per case), the learner's function sends the answer key's
  requests, in order (role, messages, sampling), and returns the answer key's result.

Each may forbid calling the package's own version (`forbid`). A spec also carries a right answer
(`reference`; for `Values` the oracle, for `Calls` the answer key), from which tests/test_check_specs.py makes the
wrong answers every check must fail: a typed-in constant, the right answer with any one argument ignored, and for
`Calls` the right answer sending a request one word off.

    SPEC = Values("my_holm", [Case(([0.01, 0.04],)), ...], oracle=holm_by_statsmodels,
                  misreadings=[Misreading(bonferroni, "That is Bonferroni's correction ...")])
    problem = SPEC.problem(my_holm)     # None, or the message
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from . import offline, package_calls

# by exercise key; the generic tests read them
SPECS: dict[str, list[Values | Properties | Calls]] = {}


@dataclass(frozen=True)
class Case:
    """The arguments of one call (`kwargs` passed by name), and what the message adds when this case fails."""

    args: tuple
    note: str = ""
    kwargs: dict = field(default_factory=dict)

    def copies(self) -> tuple[tuple, dict]:
        """Fresh copies of the arguments: a function that changes its input changes no case."""
        return copy.deepcopy((self.args, self.kwargs))


@dataclass(frozen=True)
class Raised:
    """What a call raised, in place of a value: an oracle that raises says the learner's function must raise the
    same kind."""

    error: BaseException

    def __repr__(self) -> str:
        return f"<raised {type(self.error).__name__}: {self.error}>"


def _plain(value: object) -> object:
    """`value` with every object that has no == of its own (a graph, a connection) as its type: copies of those
    are never equal, and cannot say whether a call changed them."""
    if isinstance(value, (list, tuple)):
        return (list if isinstance(value, list) else tuple)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return type(value) if type(value).__eq__ is object.__eq__ else value


def _unchanged(before: object, after: object) -> bool:
    """The arguments after a call equal fresh copies of the case's, a bool still a bool (`same`: True == 1.0 would
    hide a flag turned into a number); objects that cannot be compared count as unchanged."""
    before, after = _plain(before), _plain(after)
    try:
        return bool(before == after) and same(before, after, tol=0)
    except Exception:  # noqa: BLE001 - an argument without a usable ==
        return True


def outcome(fn: Callable, case: Case) -> object:
    """`fn` on a copy of the case's arguments: its value, or `Raised`."""
    args, kwargs = case.copies()
    try:
        return fn(*args, **kwargs)
    except Exception as err:  # noqa: BLE001 - a raise is an outcome the spec compares
        return Raised(err)


@dataclass(frozen=True)
class Misreading:
    """A wrong reading of the exercise as a function of the same arguments, and the sentence that names it."""

    value: Callable
    why: str


def same(got: object, want: object, tol: float = 1e-9) -> bool:
    """`got` is `want`: numbers (numpy's too, never a bool) within `tol`, strings as any str that is equal,
    sequences and mappings item by item, anything else by ==."""
    if isinstance(want, bool) or want is None:
        return type(got) is type(want) and got == want
    if isinstance(
        want, str
    ):  # a str of its own kind (a StrEnum member) too, never bytes or a number
        return isinstance(got, str) and got == want
    if isinstance(want, (int, float)):
        try:
            value = float(got)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return False
        return not isinstance(got, (bool, str)) and (
            math.isclose(value, want, rel_tol=tol, abs_tol=tol)
            or (math.isnan(value) and math.isnan(want))
        )
    if isinstance(want, Mapping):
        return (
            isinstance(got, Mapping)
            and set(got) == set(want)
            and all(same(got[k], want[k], tol) for k in want)
        )
    if isinstance(want, (set, frozenset)):
        return isinstance(got, (set, frozenset)) and got == want
    if isinstance(want, (list, tuple)):
        try:
            items = list(got)  # type: ignore[arg-type]
        except TypeError:
            return False
        return (
            not isinstance(got, (str, Mapping))
            and len(items) == len(want)
            and all(same(g, w, tol) for g, w in zip(items, want, strict=True))
        )
    return got == want


def show(value: object) -> str:
    """A value as a message shows it: a float to 6 significant digits, anything else on one short line."""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, Fraction):
        return f"{float(value):.6g}"
    if hasattr(value, "entry_point") and hasattr(value, "id"):  # a course task
        return f"<task {value.id}>"
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, float) for v in value):
        return "[" + ", ".join(f"{v:.6g}" for v in value) + "]"
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


@dataclass
class _Spec:
    name: str  # the learner's function, as messages name it
    cases: Sequence[Case]
    forbid: tuple[tuple, set[str] | None, str] | None = (
        None  # (package modules, function names or None: all, message)
    )
    show: Callable[[object], str] = field(default=lambda v: show(v))
    # the cases' argument positions a right answer may leave unread
    may_ignore: frozenset[int] = frozenset()
    # `adapt(*objects)`: the function graded, from what the exercise's check cell passes (its learner's function, by
    # default); the grader (course_checks.Exercise.grade) grades that function as the check does
    adapt: Callable[..., Callable] | None = None

    def _refuses(self, used: set[str]) -> bool:
        """Did the function reach a forbidden one? Names None forbid every public function of the modules."""
        names = self.forbid[1] if self.forbid else set()
        if names is None:
            return any(not n.startswith(("<", "_")) for n in used)
        return bool(used & names)

    def register(self, key: str, adapt: Callable[..., Callable] | None = None) -> _Spec:
        """This spec as (part of) exercise `key`'s check; `adapt` as in the field."""
        self.adapt = adapt
        SPECS.setdefault(key, []).append(self)
        return self

    def exercise(
        self,
        key: str,
        name: str,
        hints: tuple[str, ...],
        passed: str | Callable,
        adapt: Callable[[Callable], Callable] | None = None,
        lesson: Callable[..., list[Case]] | None = None,
    ) -> object:
        """This spec as the whole check of exercise `key`, the lesson's `ex.<name>(fn, *data)`: it passes when
        `problem` finds nothing, and then says `passed` (a callable makes the sentence from `fn` and the data).
        `adapt(fn, *data)` turns what the learner wrote (a class, or functions) into the function of the cases'
        arguments that the spec grades; `lesson(*data)` makes the cases from the lesson's own data, tried after the made-up ones."""
        from . import exercise

        def check(fn: Callable, *data: object) -> tuple[bool, str]:
            also = {"also": lesson(*data)} if lesson else {}
            problem = self.problem(adapt(fn, *data) if adapt else fn, **also)
            if problem:
                return False, problem
            return True, passed(fn, *data) if callable(passed) else passed

        check.__name__ = check.__qualname__ = name
        check.__doc__ = f"Exercise {key}: {self.name} graded on {len(self.cases)} cases."
        self.register(key, adapt)
        return exercise(key, hints)(check)

    def call(self, case: Case, skip: int = 0) -> str:
        shown = [self.show(a) for a in case.args[skip:]] + [
            f"{k}={self.show(v)}" for k, v in case.kwargs.items()
        ]
        return f"{self.name}({', '.join((['chat'] if skip else []) + shown)})"

    def _results(self, fn: Callable, cases: Sequence[Case]) -> tuple[str | None, list]:
        """What `fn` returns on every case, or the message for a forbidden call or an exception."""
        out: list = []
        given = [case.copies() for case in cases]  # outside the refusal, whose call tracing is slow

        def run_all() -> None:
            for args, kwargs in given:
                out.append(fn(*args, **kwargs))

        try:
            if self.forbid:
                used, _ = package_calls(run_all, *self.forbid[0])
                if self._refuses(used):
                    return self.forbid[2], out
            else:
                run_all()
        except Exception as err:  # noqa: BLE001 - the learner's code may not run yet
            return f"{self.call(cases[len(out)])} raised {type(err).__name__}: {err}", out
        return None, out


@dataclass
class Values(_Spec):
    """The oracle's value on every case, compared by `equal`. `answer` is a right answer for the generic tests
    where the oracle itself is a call the spec forbids."""

    oracle: Callable = print
    equal: Callable[[object, object], bool] = same
    misreadings: Sequence[Misreading] = ()
    answer: Callable | None = None
    _wants: list | None = field(default=None, repr=False)

    @property
    def reference(self) -> Callable:
        return self.answer or self.oracle

    def wants(self) -> list:
        """The oracle's value on every case, computed once (the cases are data; an oracle may be slow)."""
        if self._wants is None:
            self._wants = [outcome(self.oracle, c) for c in self.cases]
        return self._wants

    def problem(self, fn: Callable, also: Sequence[Case] = ()) -> str | None:
        """The message for the first case `fn` gets wrong, or None. Every made-up case is tried (a misreading is
        named from them all); `also` adds cases made from the lesson's own data, tried one by one, and only once
        the made-up ones pass (their oracle values computed then: they may be large)."""
        got: list = []
        cases = [*self.cases, *also]
        wants = list(self.wants())
        changed: list = []

        def run(batch: Sequence[Case]) -> bool:
            """`fn` on each case of the batch, under the refusal if any; False when it reached a refused call. The
            copies are made and compared outside the refusal, whose call tracing slows every Python call."""
            given = [c.copies() for c in batch]

            def each() -> None:
                for args, kwargs in given:
                    try:
                        got.append(fn(*args, **kwargs))
                    except Exception as err:  # noqa: BLE001 - a raise is an outcome the spec compares
                        got.append(Raised(err))

            if self.forbid:
                used, _ = package_calls(each, *self.forbid[0])
            else:
                each()
            # what each call left, against the case's own arguments (no call was given those)
            for c, args in zip(batch, given, strict=False):
                if not changed and not _unchanged(args, (c.args, c.kwargs)):
                    changed.append(c)
            return not self.forbid or not self._refuses(used)

        if not run(self.cases):
            return self.forbid[2]
        for c in (
            also
        ):  # one by one, while every case so far agrees (the oracle run outside the refusal)
            if any(not self._agree(g, w) for g, w in zip(got, wants, strict=True)):
                break
            wants.append(outcome(self.oracle, c))
            if not run([c]):
                return self.forbid[2]
        tried = cases[: len(got)]
        wrong = [
            (c, g, w) for c, g, w in zip(tried, got, wants, strict=False) if not self._agree(g, w)
        ]
        if not wrong and changed:
            return f"{self.call(changed[0])} changed the arguments it was given: work on a copy (the caller still needs them)."
        if not wrong:
            return None
        case, value, want = wrong[0]
        # a misreading names the mistake only when the function behaves as it does on every case
        why = next(
            (
                m.why
                for m in self.misreadings
                if all(
                    self._misreads(g, outcome(m.value, c)) for c, g in zip(tried, got, strict=True)
                )
            ),
            "",
        )
        count = f"{len(wrong)} of {len(tried)} cases differ; the first: " if len(wrong) > 1 else ""
        note = f" ({case.note})" if case.note else ""
        did = (
            f"raised {value!r}"[8:-1]
            if isinstance(value, Raised)
            else f"returned {self.show(value)}"
        )
        wanted = (
            f"it should raise {type(want.error).__name__}"
            if isinstance(want, Raised)
            else f"expected {self.show(want)}"
        )
        return f"{count}{self.call(case)}{note} {did}; {wanted}." + (f" {why}" if why else "")

    def _misreads(self, got: object, misread: object) -> bool:
        """`got` is the misreading's value: the same (`same`), or what the spec's `equal` accepts as it."""
        try:
            return same(got, misread) or self._agree(got, misread)
        except Exception:  # noqa: BLE001 - an `equal` made for the oracle's values may not take a misreading's
            return False

    def _agree(self, got: object, want: object) -> bool:
        if isinstance(want, Raised) or isinstance(got, Raised):
            return (
                isinstance(got, Raised)
                and isinstance(want, Raised)
                and isinstance(got.error, type(want.error))
            )
        try:
            return bool(self.equal(got, want))
        except Exception:  # noqa: BLE001 - a value of another shape than the oracle's is not equal to it
            return False


@dataclass
class Properties(_Spec):
    """Each rule `(case, value) -> message or None` holds on every case; `reference` is a right answer."""

    rules: Sequence[Callable[[Case, object], str | None]] = ()
    reference: Callable = print

    def problem(self, fn: Callable, also: Sequence[Case] = ()) -> str | None:
        cases = [*self.cases, *also]
        refused, got = self._results(fn, cases)
        if refused:
            return refused
        for case, value in zip(cases, got, strict=True):
            for rule in self.rules:
                message = rule(case, value)
                if message:
                    return message
        return None


REAL_CALL = (
    "reached the real model (conn.chat, or a chat made from it) instead of the `chat` it was given; the check stopped "
    "that call before it was sent."
)


def first_difference(want: Sequence, got: Sequence, count: bool = True) -> str | None:
    """The first way the requests `got` (a ScriptedChat's calls) differ from `want`, or None; `count=False` reads
    only the calls both made."""
    for n, (w, g) in enumerate(zip(want, got, strict=False), 1):
        if g.role != w.role:
            return f"call {n} went to the {g.role!r} role, where the answer key calls {w.role!r}."
        if len(g.messages) != len(w.messages):
            return (
                f"call {n} ({w.role}) sent {len(g.messages)} message(s), the answer key "
                f"{len(w.messages)}: {[m.get('role') for m in w.messages]}."
            )
        for i, (wm, gm) in enumerate(zip(w.messages, g.messages, strict=True)):
            texts = wm.get("content"), gm.get("content")
            if (
                texts[0] != texts[1]
                and gm.get("role") == wm.get("role")
                and all(isinstance(t, str) for t in texts)
            ):
                at = next(
                    (k for k, (a, b) in enumerate(zip(*texts, strict=False)) if a != b),
                    min(map(len, texts)),
                )
                start = max(0, at - 40)  # the texts from a little before where they first differ
                cut = [("..." if start else "") + t[start : start + 100] for t in texts]
                return (
                    f"call {n} ({w.role}), message {i} ({wm.get('role')}), from character {at}: expected "
                    f"{cut[0]!r}, got {cut[1]!r}."
                )
            if gm != wm:
                return (
                    f"call {n} ({w.role}), message {i}: expected {{'role': {wm.get('role')!r}, 'content': "
                    f"{show(wm.get('content'))}}}, got {{'role': {gm.get('role')!r}, 'content': "
                    f"{show(gm.get('content'))}}}."
                )
        if g.params != w.params:
            return f"call {n} ({w.role}) sampled with {g.params or 'nothing'}; the answer key with {w.params or 'nothing'}."
    if count and len(got) != len(want):
        return f"it made {len(got)} call(s); the answer key makes {len(want)}: {[c.role for c in want]}."
    return None


class Wrong(Exception):  # noqa: N818 - what a Calls drive raises: its message is the diagnosis
    """Raised by a `Calls` drive that found something wrong with what the learner's function built or returned
    before it could run (a compiled graph for a builder, nodes of other names): the message says what."""


@dataclass
class Calls(_Spec):
    """Case.args is (script, *arguments after the chat). The learner's function and `key` each get a ScriptedChat of
    the script and their own copies of the arguments; the requests must be the key's, `result(got, want)` compares
    what they return and `after(key_args, my_args, key_kwargs, my_kwargs)` what became of the arguments (each a
    message or None). `key` is a
    right answer in the learner's shape (it may call the package the learner must not); `drive(fn, chat, ...)` runs a
    function of that shape (by default it calls it)."""

    key: Callable = print
    drive: Callable = field(default=lambda fn, chat, *args, **kwargs: fn(chat, *args, **kwargs))
    result: Callable[[object, object], str | None] = field(
        default=lambda got, want: (
            None if same(got, want) else f"returned {show(got)}; expected {show(want)}."
        )
    )
    after: Callable[[tuple, tuple, dict, dict], str | None] = field(default=lambda *_: None)

    @property
    def reference(self) -> Callable:
        return self.key

    def problem(self, fn: Callable) -> str | None:
        from reflect.testing import ScriptedChat

        modules, names, refusal = self.forbid or ((), set(), "")
        for case in self.cases:
            (script, *key_args), key_kwargs = case.copies()
            (_, *my_args), my_kwargs = case.copies()
            ours, theirs = ScriptedChat(copy.deepcopy(script)), ScriptedChat(copy.deepcopy(script))
            want = self.drive(self.key, ours, *key_args, **key_kwargs)
            where = (
                f"On scripted replies ({case.note})"
                if case.note
                else f"On {self.call(case, skip=1)}"
            )
            try:
                run = functools.partial(self.drive, fn, theirs, *my_args, **my_kwargs)
                used, (reached, got) = package_calls(lambda: offline(run), *modules)  # noqa: B023
            except Wrong as err:
                return f"{where}: {err}"
            except Exception as err:  # noqa: BLE001 - the learner's code may not run yet
                differs = first_difference(ours.calls, theirs.calls, count=False)
                if differs:  # a call the script has no reply for: say how the calls differ
                    return f"{where}: {differs}"
                if len(theirs.calls) > len(
                    ours.calls
                ):  # the same calls, then one the key never makes
                    return (
                        f"{where}: {self.name} made more calls than the answer key, {len(theirs.calls)} "
                        f"({[c.role for c in theirs.calls]}) where it makes {len(ours.calls)}: the script has no "
                        "reply for the last one. When does yours stop?"
                    )
                return f"{where}: {self.name} raised {type(err).__name__}: {err}"
            if reached:
                return f"{self.name} {REAL_CALL}"
            if self._refuses(used):
                return refusal
            problem = (  # what was sent, then what came back (it names more than a count of calls does)
                first_difference(ours.calls, theirs.calls, count=False)
                or self.result(got, want)
                or first_difference(ours.calls, theirs.calls)
                or self.after(tuple(key_args), tuple(my_args), key_kwargs, my_kwargs)
            )
            if problem:
                return f"{where}: {problem}"
        return None
