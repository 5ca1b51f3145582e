"""Every check spec (course_checks.spec), whatever its exercise: its right answer passes; a typed-in constant fails;
the right answer with any one of its arguments ignored fails; and each misreading it names fails with its own
sentence, so that every diagnosis can be reached."""

from __future__ import annotations

import copy
import importlib

import pytest

from course_checks import spec

for _lesson in ("00", "01", "02", "03", "03b", "04", "05", "06"):
    importlib.import_module(f"course_checks.lesson{_lesson}")

SPECS = [
    pytest.param(s, id=f"{key}-{s.name}")
    for key, specs in sorted(spec.SPECS.items())
    for s in specs
]


def test_specs_are_registered():
    assert len(SPECS) >= 6


@pytest.mark.parametrize("s", SPECS)
def test_the_right_answer_passes(s):
    assert s.problem(s.reference) is None


@pytest.mark.parametrize("s", SPECS)
def test_a_typed_in_constant_fails(s):
    value = s.reference(*copy.deepcopy(s.cases[0].args))
    assert s.problem(lambda *_: copy.deepcopy(value)) is not None


@pytest.mark.parametrize("s", SPECS)
def test_an_ignored_argument_fails(s):
    for i, fixed in enumerate(s.cases[0].args):

        def ignoring(*args, i=i, fixed=fixed):
            return s.reference(*args[:i], copy.deepcopy(fixed), *args[i + 1 :])

        assert s.problem(ignoring) is not None, f"{s.name} passes with argument {i} ignored"


@pytest.mark.parametrize("s", [p for p in SPECS if getattr(p.values[0], "misreadings", ())])
def test_each_misreading_fails_and_is_named(s):
    for m in s.misreadings:
        problem = s.problem(m.value)
        assert problem is not None and m.why in problem, (m.why, problem)


def test_a_forbidden_package_call_is_refused():
    from course_checks import lesson06
    from reflect.evaluation import report

    problem = lesson06.PASS_AT_K.problem(lambda n, c, k: report.pass_at_k(n, c, k))
    assert problem and "already has" in problem


def test_an_exception_names_the_case():
    from course_checks import lesson06

    problem = lesson06.HOLM.problem(lambda f: [1 / (len(f) - 1)] * len(f))
    assert "my_holm([0.2]) raised ZeroDivisionError" in problem
