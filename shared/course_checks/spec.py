"""A check is a short spec of one of three kinds, each graded on cases the spec makes:

- `Values`: the learner's function gives the oracle's value on every case. Where it does not, the first
  `Misreading` (a wrong reading a learner may take) whose value it gives names the mistake; otherwise the
  message says what was expected and what came back.
- `Properties`: every rule holds of what the learner's function returns on every case (the cases are made up
  where many answers are right, such as what a request may say).
- `Calls`: on scripted runs (a `ScriptedChat` script per case), the learner's function sends the answer key's
  requests, in order (role, messages, sampling), and returns the answer key's result.

Either may forbid calling the package's own version (`forbid`). A spec also carries a right answer
(`reference`; for `Values` the oracle, for `Calls` the answer key), from which tests/test_check_specs.py makes the
wrong answers every check must fail: a typed-in constant, the right answer with any one argument ignored, and for
`Calls` the right answer sending a request one word off.

    SPEC = Values("my_holm", [Case(([0.01, 0.04],)), ...], oracle=holm_by_statsmodels,
                  misreadings=[Misreading(bonferroni, "That is Bonferroni's correction ...")])
    problem = SPEC.problem(my_holm)     # None, or the message
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from . import offline, package_calls

SPECS: dict[str, list[Values | Properties]] = {}  # by exercise key; the generic tests read them


@dataclass(frozen=True)
class Case:
    """The arguments of one call, and what the message adds when this case fails."""

    args: tuple
    note: str = ""


@dataclass(frozen=True)
class Misreading:
    """A wrong reading of the exercise as a function of the same arguments, and the sentence that names it."""

    value: Callable
    why: str


def same(got: object, want: object, tol: float = 1e-9) -> bool:
    """`got` is `want`: numbers (numpy's too, never a bool) within `tol`, sequences and mappings item by item,
    anything else by ==."""
    if isinstance(want, bool) or want is None or isinstance(want, str):
        return type(got) is type(want) and got == want
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
    forbid: tuple[tuple, set[str], str] | None = None  # (package modules, function names, message)
    show: Callable[[object], str] = field(default=lambda v: show(v))

    def register(self, key: str) -> _Spec:
        SPECS.setdefault(key, []).append(self)
        return self

    def call(self, case: Case) -> str:
        return f"{self.name}({', '.join(self.show(a) for a in case.args)})"

    def _results(self, fn: Callable) -> tuple[str | None, list]:
        """What `fn` returns on every case, or the message for a forbidden call or an exception."""
        out: list = []

        def run_all() -> None:
            for case in self.cases:
                out.append(
                    fn(*copy.deepcopy(case.args))
                )  # a function that changes its input changes no case

        try:
            if self.forbid:
                used, _ = package_calls(run_all, *self.forbid[0])
                if used & self.forbid[1]:
                    return self.forbid[2], out
            else:
                run_all()
        except Exception as err:  # noqa: BLE001 - the learner's code may not run yet
            return f"{self.call(self.cases[len(out)])} raised {type(err).__name__}: {err}", out
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
            self._wants = [self.oracle(*copy.deepcopy(c.args)) for c in self.cases]
        return self._wants

    def problem(self, fn: Callable) -> str | None:
        refused, got = self._results(fn)
        if refused:
            return refused
        wrong = [
            (c, g, w)
            for c, g, w in zip(self.cases, got, self.wants(), strict=True)
            if not self.equal(g, w)
        ]
        if not wrong:
            return None
        case, got_value, want = wrong[0]
        why = next(
            (m.why for m in self.misreadings if _gives(m.value, case.args, got_value, self.equal)),
            "",
        )
        count = (
            f"{len(wrong)} of {len(self.cases)} cases differ; the first: " if len(wrong) > 1 else ""
        )
        note = f" ({case.note})" if case.note else ""
        return (
            f"{count}{self.call(case)}{note} returned {self.show(got_value)}; expected {self.show(want)}."
            + (f" {why}" if why else "")
        )


@dataclass
class Properties(_Spec):
    """Each rule `(case, value) -> message or None` holds on every case; `reference` is a right answer."""

    rules: Sequence[Callable[[Case, object], str | None]] = ()
    reference: Callable = print

    def problem(self, fn: Callable) -> str | None:
        refused, got = self._results(fn)
        if refused:
            return refused
        for case, value in zip(self.cases, got, strict=True):
            for rule in self.rules:
                message = rule(case, value)
                if message:
                    return message
        return None


def _gives(reading: Callable, args: tuple, value: object, equal: Callable) -> bool:
    try:
        return equal(value, reading(*args))
    except Exception:  # noqa: BLE001 - a misreading that cannot run on this case names nothing
        return False


REAL_CALL = (
    "reached the real model (conn.chat, or a chat made from it) instead of the `chat` it was given; the check stopped "
    "that call before it was sent."
)


def first_difference(want: Sequence, got: Sequence) -> str | None:
    """The first way the requests `got` (a ScriptedChat's calls) differ from `want`, or None."""
    for n, (w, g) in enumerate(zip(want, got, strict=False), 1):
        if g.role != w.role:
            return f"call {n} went to the {g.role!r} role, where the answer key calls {w.role!r}."
        if len(g.messages) != len(w.messages):
            return (
                f"call {n} ({w.role}) sent {len(g.messages)} message(s), the answer key "
                f"{len(w.messages)}: {[m.get('role') for m in w.messages]}."
            )
        for i, (wm, gm) in enumerate(zip(w.messages, g.messages, strict=True)):
            if gm != wm:
                return (
                    f"call {n} ({w.role}), message {i}: expected {{'role': {wm.get('role')!r}, 'content': "
                    f"{show(wm.get('content'))}}}, got {{'role': {gm.get('role')!r}, 'content': "
                    f"{show(gm.get('content'))}}}."
                )
        if g.params != w.params:
            return f"call {n} ({w.role}) sampled with {g.params or 'nothing'}; the answer key with {w.params or 'nothing'}."
    if len(got) != len(want):
        return f"it made {len(got)} call(s); the answer key makes {len(want)}: {[c.role for c in want]}."
    return None


@dataclass
class Calls(_Spec):
    """Case.args is (script, *arguments after the chat). The learner's function and `key` each get a ScriptedChat of
    the script; the requests must be the key's, and `result(got, want)` (a message or None) compares what they
    return. `key` is a right answer in the learner's shape (it may call the package the learner must not)."""

    key: Callable = print
    result: Callable[[object, object], str | None] = field(
        default=lambda got, want: (
            None if same(got, want) else f"returned {show(got)}; expected {show(want)}."
        )
    )

    @property
    def reference(self) -> Callable:
        return self.key

    def call(self, case: Case) -> str:
        return f"{self.name}(chat, {', '.join(self.show(a) for a in case.args[1:])})"

    def problem(self, fn: Callable) -> str | None:
        from reflect.testing import ScriptedChat

        for case in self.cases:
            script, *args = case.args
            ours, theirs = ScriptedChat(copy.deepcopy(script)), ScriptedChat(copy.deepcopy(script))
            want = self.key(ours, *copy.deepcopy(args))
            where = f"On scripted replies ({case.note})" if case.note else f"On {self.call(case)}"
            modules, names, refusal = self.forbid or ((), set(), "")
            try:
                used, (reached, got) = package_calls(
                    lambda t=theirs, a=args: offline(lambda: fn(t, *copy.deepcopy(a))), *modules
                )
            except IndexError as err:
                if "no more replies" not in str(err):
                    raise
                return f"{where}: {self.name} asked for more replies than the answer key, which calls {[c.role for c in ours.calls]}."
            except Exception as err:  # noqa: BLE001 - the learner's code may not run yet
                return f"{where}: {self.name} raised {type(err).__name__}: {err}"
            if reached:
                return f"{self.name} {REAL_CALL}"
            if used & names:
                return refusal
            problem = first_difference(ours.calls, theirs.calls) or self.result(got, want)
            if problem:
                return f"{where}: {problem}"
        return None
