"""Every check spec (course_checks.spec), whatever its exercise: its right answer passes; a typed-in constant fails;
the right answer with any one of its arguments ignored fails; and each misreading it names fails with its own
sentence, so that every diagnosis can be reached."""

from __future__ import annotations

import copy
import dataclasses
import importlib

import pytest

from course_checks import spec
from reflect.testing import ScriptedChat

for _lesson in ("00", "01", "02", "03", "03b", "04", "05", "06"):
    importlib.import_module(f"course_checks.lesson{_lesson}")

SPECS = [
    pytest.param(s, id=f"{key}-{s.name}")
    for key, specs in sorted(spec.SPECS.items())
    for s in specs
]


def trusted(s):
    """The spec without its refusal: a right answer and its mutants may call the package the learner may not (a
    `Values` spec's oracle values computed once, on the spec itself, and carried over)."""
    if isinstance(s, spec.Values):
        s.wants()
    return dataclasses.replace(s, forbid=None)


def arguments(s, case):
    """The learner's positional arguments of a case (a Calls case starts with its script; the chat comes first)."""
    return case.args[1:] if isinstance(s, spec.Calls) else case.args


def answer(s, chat, args, kwargs):
    return (
        s.reference(chat, *args, **kwargs)
        if isinstance(s, spec.Calls)
        else s.reference(*args, **kwargs)
    )


def learner(s, body):
    """`body(chat, args, kwargs)` as a function with the learner's signature."""
    if isinstance(s, spec.Calls):
        return lambda chat, *args, **kwargs: body(chat, args, kwargs)
    return lambda *args, **kwargs: body(None, args, kwargs)


def test_specs_are_registered():
    assert len(SPECS) >= 10


@pytest.mark.parametrize("s", SPECS)
def test_the_right_answer_passes(s):
    assert trusted(s).problem(s.reference) is None


@pytest.mark.parametrize("s", SPECS)
def test_a_typed_in_constant_fails(s):
    case = s.cases[0]
    chat = ScriptedChat(copy.deepcopy(case.args[0])) if isinstance(s, spec.Calls) else None
    value = answer(s, chat, *copy.deepcopy((arguments(s, case), case.kwargs)))
    assert (
        trusted(s).problem(learner(s, lambda chat, args, kwargs: copy.deepcopy(value))) is not None
    )


@pytest.mark.parametrize("s", SPECS)
def test_an_ignored_argument_fails(s):
    first = s.cases[0]
    for i, fixed in enumerate(arguments(s, first)):
        if i in s.may_ignore:
            continue

        def ignoring(chat, args, kwargs, i=i, fixed=fixed):
            return answer(s, chat, (*args[:i], copy.deepcopy(fixed), *args[i + 1 :]), kwargs)

        assert trusted(s).problem(learner(s, ignoring)) is not None, (
            f"{s.name} passes with argument {i} ignored"
        )
    for name in first.kwargs:

        def ignoring_named(chat, args, kwargs, name=name):
            return answer(s, chat, args, {**kwargs, name: copy.deepcopy(first.kwargs[name])})

        assert trusted(s).problem(learner(s, ignoring_named)) is not None, (
            f"{s.name} passes with {name} ignored"
        )


class _OneWordOff:
    """A chat that adds one word to the last message of every request it passes on."""

    def __init__(self, chat):
        self.chat = chat

    def __call__(self, messages, role="generator", **params):
        messages = [dict(m) for m in messages]
        messages[-1]["content"] = f"{messages[-1].get('content', '')} Briefly."
        return self.chat(messages, role=role, **params)


@pytest.mark.parametrize("s", [p for p in SPECS if isinstance(p.values[0], spec.Calls)])
def test_a_request_one_word_off_fails(s):
    problem = trusted(s).problem(
        lambda chat, *args, **kw: s.reference(_OneWordOff(chat), *args, **kw)
    )
    assert problem is not None and "message" in problem, problem


@pytest.mark.parametrize("s", [p for p in SPECS if getattr(p.values[0], "misreadings", ())])
def test_each_misreading_fails_and_is_named(s):
    for m in s.misreadings:
        problem = trusted(s).problem(m.value)
        assert problem is not None and m.why in problem, (m.why, problem)


def test_a_forbidden_package_call_is_refused():
    from course_checks import lesson06
    from reflect.evaluation import report

    problem = lesson06.PASS_AT_K.problem(lambda n, c, k: report.pass_at_k(n, c, k))
    assert problem and "already has" in problem


def test_an_exception_names_the_case_and_an_expected_raise_is_graded():
    from course_checks import lesson06

    problem = lesson06.HOLM.problem(
        lambda f: [min(1.0, p * len(f)) for p in f] if len(f) > 3 else 1 / 0
    )
    assert (
        "my_holm([0.01, 0.04, 0.03]) raised ZeroDivisionError: division by zero; expected [0.03, 0.06, 0.06]"
        in problem
    )
    must_raise = spec.Values("f", [spec.Case((0,)), spec.Case((2,))], oracle=lambda x: 1 / x)
    assert must_raise.problem(lambda x: 1 / x) is None
    assert "f(0) returned 0; it should raise ZeroDivisionError" in must_raise.problem(
        lambda x: 1 / x if x else 0
    )


def test_every_exercise_is_a_spec_and_graded_offline():
    """Every exercise's check is a spec (or specs) of the generic kinds, so `course.py grade` counts each one."""
    from course_checks import REGISTRY

    assert len(REGISTRY) == 63 and set(REGISTRY) == set(spec.SPECS)
    assert all(ex.scripted for ex in REGISTRY.values())


def test_a_call_past_the_answer_keys_last_is_named_not_a_bare_index_error():
    def key(chat, x):
        return chat([{"role": "user", "content": x}], role="generator").text

    once = spec.Calls("f", [spec.Case(({"generator": ["a"]}, "hi"))], key=key)
    assert once.problem(key) is None
    problem = once.problem(lambda chat, x: key(chat, x) + key(chat, x))
    assert "f made more calls than the answer key, 2 (['generator', 'generator'])" in problem
    assert "IndexError" not in problem


def test_a_spec_as_an_exercise_grades_the_lessons_own_cases_after_its_made_up_ones():
    """`Spec.exercise(lesson=...)`: the cases made from the data the check cell passes are graded too, and the
    passing sentence is made from the learner's function and that data."""
    from course_checks import REGISTRY

    square = spec.Values("square", [spec.Case((2,)), spec.Case((3,))], oracle=lambda x: x * x)
    try:
        ex = square.exercise(
            "test.1",
            "squares",
            hints=("multiply x by itself",),
            lesson=lambda data: [spec.Case((x,), "the lesson's data") for x in data],
            passed=lambda fn, data: f"right on {len(data)} of the lesson's numbers",
        )
        assert ex.check(lambda x: x * x, [7, 8]) == (True, "right on 2 of the lesson's numbers")
        ok, message = ex.check(lambda x: x * x if x < 5 else 0, [7, 8])
        assert not ok and "square(7) (the lesson's data) returned 0; expected 49" in message, (
            message
        )
        assert spec.SPECS["test.1"] == [square]
    finally:
        REGISTRY.pop("test.1", None)
        spec.SPECS.pop("test.1", None)


def test_a_request_differing_deep_in_a_long_text_is_shown_where_it_differs():
    """first_difference shows two texts from a little before their first difference, not their openings (a
    message's first 120 characters are often the same task statement)."""
    long = "Task: " + "x" * 300

    def key(chat, tail):
        return chat([{"role": "user", "content": long + "return 1"}], role="generator").text

    calls = spec.Calls("f", [spec.Case(({"generator": ["a"]}, "t"))], key=key)
    problem = calls.problem(
        lambda chat, tail: (
            chat([{"role": "user", "content": long + "return 2"}], role="generator").text
        )
    )
    assert (
        "from character 313" in problem and "xreturn 1'" in problem and "xreturn 2'" in problem
    ), problem
