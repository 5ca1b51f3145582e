"""The two exercises whose checks go on from their specs (graded by tests/test_check_specs.py) to values the lesson
got from the model, 01.6 and 01.7, made here as the lesson makes them (`VALUES`, the model's calls answered from the
lesson's cassette): the solved cells pass the whole check, and the wrong answers made from the learner's functions by
rule fail it: each function of the answer returning its first value whatever it is given (a typed-in constant), each
of its arguments ignored in turn (pinned to the first call's), and, where the answer sends requests, each request cut
to its first line with a word added (a request that breaks whatever rule the exercise sets for it)."""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import json
import re
import sys
import types
from pathlib import Path

import pytest

from course_checks import REGISTRY
from reflect.tasks import get_task
from reflect.testing import ScriptedChat

ROOT = Path(__file__).resolve().parents[1]


def _cells(lesson: str) -> list[dict]:
    path = next((ROOT / "solutions").glob(f"{lesson}_*.ipynb"))
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _keyed(lesson: str) -> list[tuple[str, str, str]]:
    """(key, solved cell, check cell) of every exercise of a lesson, in order."""
    cells, out = _cells(lesson), []
    for i, cell in enumerate(cells):
        key = cell.get("metadata", {}).get("reflect", {}).get("key")
        if key:
            check = next(c for c in cells[i + 1 :] if c["cell_type"] == "code")
            out.append((key, "".join(cell["source"]), "".join(check["source"])))
    return out


def _replay(notebook: str):
    """A lesson's connection, every call answered from its cassette."""
    from course_runtime import connect
    from reflect.model.config import Settings

    return connect(notebook, settings=Settings.from_env({"COURSE_BACKEND": "replay"}), quiet=True)


def _baseline() -> tuple:
    """Lesson 01's connection (replaying its cassette), its generator chat and its baseline attempts."""
    from functools import partial

    from reflect.judging import judge
    from reflect.model.roles import sampling
    from reflect.strategies import one_shot
    from reflect.tasks import course_tasks

    conn = _replay("01_one_shot_baseline")
    chat = partial(conn.chat, **sampling("generator"))
    runs = [one_shot(chat, t) for t in course_tasks()]
    attempts = [
        judge(
            t,
            r.final_code,
            prompt_tokens=r.steps[0].prompt_tokens,
            completion_tokens=r.steps[0].completion_tokens,
        )
        for t, r in zip(course_tasks(), runs, strict=True)
    ]
    return conn, chat, attempts


def _retry(ns: dict) -> dict:
    """Lesson 01's exercise 6 values: the failed tasks retried by the solved `retry_failed` with its prompt."""
    conn, chat, attempts = _baseline()
    retry = ns["retry_failed"](chat, attempts, ns["CAREFUL_PROMPT"])
    return {"attempts": attempts, "conn": conn, "retry": retry}


def _draws(ns: dict) -> dict:
    """Lesson 01's exercise 7 values: the baseline's attempts, the first failed task and its three draws by the
    solved `sample_three`, each call answered from the lesson's cassette."""
    conn, _, attempts = _baseline()
    first_failed = get_task(next(a.task_id for a in attempts if not a.passed))
    draws = ns["sample_three"](conn.chat, first_failed)
    return {"attempts": attempts, "first_failed": first_failed, "draws": draws, "conn": conn}


# what a check reads besides the learner's functions, made here as the lesson makes it (from the namespace of the
# lesson's solved cells)
VALUES = {
    "01.6": _retry,
    "01.7": _draws,
}


def solved(key: str) -> tuple[dict, list[str], set[str]]:
    """The lesson's imports and its solved cells up to `key`'s, run in one namespace (with `VALUES`); the names the
    check cell passes; and the names `key`'s own cell defines (the answer's functions)."""
    lesson = key.split(".")[0]
    cells = _cells(lesson)
    module = types.ModuleType(
        f"solved_{lesson}"
    )  # a module: LangGraph reads a state's hints from its globals
    sys.modules[module.__name__] = module
    namespace = module.__dict__
    for cell in cells:  # every import of the lesson, wherever its cell is
        try:
            tree = ast.parse("".join(cell["source"])) if cell["cell_type"] == "code" else None
        except SyntaxError:
            continue
        imports = [
            n for n in getattr(tree, "body", []) if isinstance(n, ast.Import | ast.ImportFrom)
        ]
        exec(compile(ast.Module(imports, []), "imports", "exec"), namespace)  # noqa: S102 - the course's
    for k, source, check in _keyed(lesson):
        if k.split(".")[1].isdigit() and int(k.split(".")[1]) > int(key.split(".")[1]):
            continue
        before = dict(namespace)
        try:
            exec(source, namespace)  # noqa: S102
        except (
            NameError
        ):  # a cell that also runs on the lesson's model output: what runs without it
            for statement in ast.parse(source).body:
                try:
                    exec(compile(ast.Module([statement], []), key, "exec"), namespace)  # noqa: S102
                except NameError:
                    continue
        if k == key:
            own = {n for n, v in namespace.items() if before.get(n) is not v}
            namespace.update(VALUES.get(key, lambda ns: {})(namespace))
            args = re.fullmatch(r"ex\.\w+\((.*)\)", check.strip()).group(1)
            return namespace, [a.strip() for a in args.split(",")], own
    raise LookupError(key)


class _Broken:
    """A chat that cuts the last message of every request it passes on to its first line, and adds a word."""

    def __init__(self, chat: ScriptedChat, sent: list) -> None:
        self.chat, self.sent = chat, sent

    def __call__(self, messages, role="generator", **params):
        messages = [dict(m) for m in messages]
        first = str(messages[-1].get("content", "")).split("\n", 1)[0]
        messages[-1]["content"] = f"{first} Briefly."
        self.sent.append(role)
        return self.chat(messages, role=role, **params)

    def __getattr__(self, name):
        return getattr(self.chat, name)


def constant(fn):
    """`fn` that returns its first value on every later call."""
    first: list = []

    @functools.wraps(fn)
    def typed_in(*args, **kwargs):
        if not first:
            first.append(fn(*args, **kwargs))
        try:
            return copy.deepcopy(first[0])
        except Exception:  # noqa: BLE001 - a value that cannot be copied is handed back itself
            return first[0]

    return typed_in, first


def pinned(fn, name: str):
    """`fn` with its argument `name` fixed at the first call's value."""
    signature, first = inspect.signature(fn), {}

    @functools.wraps(fn)
    def ignoring(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        if name in first:
            bound.arguments[name] = first[name]
        else:
            first[name] = bound.arguments[name]
        return fn(*bound.args, **bound.kwargs)

    return ignoring


def breaking(fn, sent: list):
    """`fn` whose chats (the ScriptedChats it is given) receive requests cut short."""

    @functools.wraps(fn)
    def rude(*args, **kwargs):
        wrap = lambda a: _Broken(a, sent) if isinstance(a, ScriptedChat) else a  # noqa: E731
        return fn(*map(wrap, args), **{k: wrap(v) for k, v in kwargs.items()})

    return rude


def _parameters(fn) -> list[str]:
    return [
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name != "self"
    ]


def mutants(answer):
    """(what is wrong, the wrong answer, what tells whether it applies) for one function or class of an answer."""
    if inspect.isclass(answer):  # a class: its own public methods, one at a time
        for method, fn in vars(answer).items():
            if callable(fn) and not method.startswith("_"):
                for what, wrong, applies in mutants(fn):
                    yield (
                        f"{answer.__name__}.{method}: {what}",
                        type(answer.__name__, (answer,), {method: wrong}),
                        applies,
                    )
        return
    typed_in, first = constant(answer)
    yield "a typed-in constant", typed_in, lambda: bool(first) and first[0] is not None
    for name in _parameters(answer):
        yield f"{name} ignored", pinned(answer, name), lambda: True
    sent: list = []
    yield "a request cut short", breaking(answer, sent), lambda: bool(sent)


def passes(key: str, args: list) -> bool:
    return REGISTRY[key].evaluate(*args)[0]


BESPOKE = sorted(VALUES)


@pytest.mark.parametrize("key", BESPOKE)
def test_the_solved_cells_pass_and_every_wrong_answer_made_from_them_fails(key):
    namespace, names, own = solved(key)
    args = [namespace[n] for n in names]
    assert passes(key, args), REGISTRY[key].evaluate(*args)[1]
    passed = []
    for i, answer in enumerate(args):
        if names[i] not in own or not callable(answer):  # a value, or an earlier exercise's answer
            continue
        for what, wrong, applies in mutants(answer):
            if passes(key, [*args[:i], wrong, *args[i + 1 :]]) and applies():
                passed.append(f"{names[i]}: {what}")
    assert passed == [], f"{key}: wrong answers that pass: {passed}"
