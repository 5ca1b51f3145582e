"""The exercises' shape, the learner copies, and the check machinery on made-up exercises.

The checks themselves are graded in the lessons' own kernels by the nbval run of solutions/
(tests/nbval_lessons.py): the solution's check must show its committed "✅", and every
planted wrong answer and the placeholder must get "Not yet".
"""

import os
import re
from pathlib import Path

import nbformat
import pytest

from course_checks import REGISTRY, Exercise, later, reset_hints

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9][0-9]*_*.ipynb"))
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
CHECK_CELL = re.compile(r"ex\.(\w+)\(([\w., \[\]\"'\-]*)\)")  # one call, names and constants only


def exercises_of(nb: nbformat.NotebookNode) -> list[tuple[int, int]]:
    """(exercise cell, check cell) index pairs: the check is the next code cell."""
    pairs = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and "placeholder" in cell.metadata.get("reflect", {}):
            j = next(k for k in range(i + 1, len(nb.cells)) if nb.cells[k].cell_type == "code")
            pairs.append((i, j))
    return pairs


def text_of(cell: nbformat.NotebookNode) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type == "error":
            parts.append(f"{out.ename}: {out.evalue}")
        elif "text/plain" in out.get("data", {}):
            parts.append(out.data["text/plain"])
    return "".join(parts)


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_every_exercise_has_a_one_line_check_and_a_planted_wrong_answer(path):
    nb = nbformat.read(path, as_version=4)
    pairs = exercises_of(nb)
    assert len(pairs) >= 3, f"{path.name}: {len(pairs)} exercises"
    for i, j in pairs:
        check = nb.cells[j].source.strip()
        m = CHECK_CELL.fullmatch(check)
        assert m, (
            f"{path.name} cell {j}: a check cell is one call ex.NAME(args), not {check[:80]!r}"
        )
        planted = nb.cells[i].metadata["reflect"].get("planted", [])
        assert planted and all(p["source"].strip() and p["why"].strip() for p in planted), (
            f"{path.name} cell {i}: at least one planted wrong answer, with why it is wrong"
        )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_learner_check_cell_shows_its_answer(path):
    """The learner's check cells hold one call; no line of a solution appears anywhere in the learner's copy."""
    learner = nbformat.read(path, as_version=4)
    solution = nbformat.read(ROOT / "solutions" / path.name, as_version=4)
    elsewhere = {
        line.strip()
        for k, c in enumerate(solution.cells)
        if k not in {i for i, _ in exercises_of(solution)}
        for line in c.source.splitlines()
    }
    elsewhere |= {
        line.strip()
        for i, _ in exercises_of(solution)  # what the placeholder hands the learner
        for line in solution.cells[i].metadata["reflect"]["placeholder"].splitlines()
    }
    secret = {
        line.strip()
        for i, _ in exercises_of(solution)
        for line in solution.cells[i].source.splitlines()
        if len(line.strip()) > 30
        and line.strip() not in elsewhere
        and not line.strip().startswith("#")
    }
    shown = "\n".join(c.source for c in learner.cells)
    leaked = sorted(line for line in secret if line in shown)
    assert not leaked, f"{path.name} shows solution lines: {leaked[:3]}"
    for c in learner.cells:
        if c.cell_type == "code" and "ex." in c.source and CHECK_CELL.search(c.source):
            assert CHECK_CELL.fullmatch(c.source.strip()), (
                f"{path.name}: a check cell holds more than its call"
            )


@pytest.mark.parametrize("path", SOLUTIONS, ids=lambda p: p.stem)
def test_committed_solutions_show_no_failing_check(path):
    nb = nbformat.read(path, as_version=4)
    for _, j in exercises_of(nb):
        out = text_of(nb.cells[j])
        assert out.startswith("✅"), f"{path.name} cell {j} shows {out[:120]!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_learner_copies_show_no_verdict_and_no_hint_before_a_try(path):
    nb = nbformat.read(path, as_version=4)
    checks = [
        c for c in nb.cells if c.cell_type == "code" and CHECK_CELL.fullmatch(c.source.strip())
    ]
    assert checks
    for c in checks:
        assert not c.outputs, f"{path.name}: a check cell ships {text_of(c)[:120]!r}"
    exercises = [c for c in nb.cells if c.get("metadata", {}).get("reflect", {}).get("exercise")]
    assert exercises and not any(c.outputs for c in exercises)


def test_every_registered_exercise_is_checked_in_a_lesson():
    import importlib

    for n in {p.name.split("_")[0] for p in SOLUTIONS}:
        try:
            importlib.import_module(f"course_checks.lesson{n}")
        except ModuleNotFoundError:
            continue
    used = set()
    for path in SOLUTIONS:
        nb = nbformat.read(path, as_version=4)
        lesson = path.name.split("_")[0]
        for _, j in exercises_of(nb):
            m = CHECK_CELL.fullmatch(nb.cells[j].source.strip())
            if m:
                used.add((lesson, m.group(1)))
    registered = {(ex.key.split(".")[0], ex.name) for ex in REGISTRY.values()}
    assert registered <= used, f"checks no lesson calls: {sorted(registered - used)}"


# The machinery itself, on made-up exercises (not registered).


def make(hints=("nudge", "bigger")) -> Exercise:
    def sample(value):
        """a made-up exercise"""
        if value == "boom":
            raise ValueError("learner bug")
        return value == 42, f"got {value!r}"

    return Exercise("99.1", hints, sample)


def test_a_pass_prints_the_message_and_no_hint(capsys):
    reset_hints()
    make()(42)
    assert capsys.readouterr().out == "✅ got 42\n"


def test_hints_come_one_per_failed_run_and_never_the_answer(capsys, monkeypatch):
    import course_checks

    monkeypatch.setattr(
        course_checks, "solution_cell", lambda key: "SECRET-42" if key == "99.1" else ""
    )
    reset_hints()
    ex = make()
    outs = []
    for value in (1, 2, 3):  # the message changes each time: the count does not restart
        ex(value)
        outs.append(capsys.readouterr().out)
    assert (
        outs[0]
        == "❌ Not yet. got 1\nHint 1 of 2: nudge\n(Run this cell again for the next hint.)\n"
    )
    assert "Hint 2 of 2: bigger" in outs[1] and "reveal()" in outs[1]
    assert outs[2].replace("got 3", "got 2") == outs[1]
    assert all("SECRET-42" not in o for o in outs)
    ex.reveal()
    assert "SECRET-42" in capsys.readouterr().out


def test_a_pass_restarts_the_hints_and_an_exception_is_a_not_yet(capsys):
    reset_hints()
    ex = make()
    ex(1)
    ex(42)
    capsys.readouterr()
    ex("boom")
    out = capsys.readouterr().out
    assert out.startswith("❌ Not yet. your code raised ValueError: learner bug\nHint 1 of 2")


def test_exercises_keep_their_own_counts():
    reset_hints()
    a, b = make(), Exercise("99.2", ("other nudge", "other bigger"), lambda v: (False, "no"))
    a.outcome(1)
    assert b.outcome(1).hints_shown == 1
    assert a.outcome(1).hints_shown == 2


def test_a_step_the_message_explains_gets_no_hint_and_keeps_the_count(capsys):
    reset_hints()
    ex = Exercise(
        "99.4",
        ("about the function", "more"),
        lambda f: later("the function is right; now call the model.") if f else (False, "wrong"),
    )
    ex(False)
    assert ex.outcome(True).text == "❌ Not yet. the function is right; now call the model."
    assert ex.outcome(False).hints_shown == 2  # the first failure's hint count was kept


def test_a_replay_miss_is_not_swallowed():
    from course_runtime.replay import ReplayMiss

    def raises(_):
        raise ReplayMiss("miss")

    with pytest.raises(ReplayMiss):
        Exercise("99.3", ("n",), raises)(1)


def test_every_exercise_reveals_its_solved_cell_and_only_that():
    """reveal() prints the solved cell of its own exercise (so the answer is written once, and an answer that
    replays in replay, such as 00.1's recorded request, is the one revealed)."""
    import importlib

    from course_checks import solution_cell

    for n in {p.name.split("_")[0] for p in SOLUTIONS}:
        importlib.import_module(f"course_checks.lesson{n}")
    for key, ex in REGISTRY.items():
        path = next((ROOT / "solutions").glob(f"{key.split('.')[0]}_*.ipynb"))
        nb = nbformat.read(path, as_version=4)
        solved = [
            c.source for c in nb.cells if c.get("metadata", {}).get("reflect", {}).get("key") == key
        ]
        assert solved == [solution_cell(key)], key
        check = next(
            nb.cells[j].source
            for i, j in exercises_of(nb)
            if nb.cells[i].metadata["reflect"].get("key") == key
        )
        assert check.strip().startswith(f"ex.{ex.name}("), (key, check)


def lesson_under_nbval(tmp_path, planted: str) -> str:
    """A made-up lesson, one exercise, run as `make test` runs the solutions: its pytest output."""
    import subprocess
    import sys

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    backend = nbformat.v4.new_code_cell("import os\nprint(os.environ['COURSE_BACKEND'])")
    backend.outputs = [nbformat.v4.new_output("stream", name="stdout", text="replay\n")]
    backend.execution_count = 1
    exercise = nbformat.v4.new_code_cell("def f(x):\n    return x + 1")
    exercise.execution_count = 2
    exercise.metadata["reflect"] = {
        "key": "99.9",
        "placeholder": "def f(x):\n    ...",
        "planted": [{"source": planted, "why": "a made-up wrong answer"}],
    }
    check = nbformat.v4.new_code_cell(
        "print('✅ right' if f(1) == 2 and f(5) == 6 else '❌ Not yet. wrong\\nHint 1 of 1: add one')"
    )
    check.outputs = [nbformat.v4.new_output("stream", name="stdout", text="✅ right\n")]
    check.execution_count = 3
    nb.cells = [backend, exercise, check]
    nbformat.write(nb, tmp_path / "99_made_up.ipynb")
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    env = {k: v for k, v in os.environ.items() if k != "COURSE_BACKEND"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval", "."],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return done.stdout + done.stderr


def test_nbval_runs_a_lesson_in_replay_and_fails_a_planted_answer_its_check_passes(tmp_path):
    out = lesson_under_nbval(tmp_path, "def f(x):\n    return 2 * x")  # right on 1, wrong on 5
    assert "4 passed" in out, out[-2000:]  # three cells, replay printed; the wrong answers' test
    (tmp_path / "second").mkdir()
    out = lesson_under_nbval(
        tmp_path / "second", "def f(x):\n    return 1 + x"
    )  # right: not failed
    assert "1 failed, 3 passed" in out and "is not failed" in out, out[-2000:]


def test_a_stop_rule_with_caps_of_its_own_is_failed():
    from course_checks import lesson00

    def right(approved, rounds, tokens, max_rounds, budget):
        if approved:
            return "accepted"
        if tokens >= budget:
            return "token_budget"
        return "max_iterations" if rounds >= max_rounds else None

    assert lesson00.stop_rule.evaluate(right)[0]
    for wrong in (
        lambda a, r, t, m, b: (
            right(a, r, t, m, b) or ("max_iterations" if r >= 4 else None)
        ),  # a cap of its own
        lambda a, r, t, m, b: (
            right(a, r, t, m, b) or ("token_budget" if t >= 2000 else None)
        ),  # a budget of its own
        lambda a, r, t, m, b: (
            "accepted"
            if a
            else ("token_budget" if b <= t <= b + 300 else ("max_iterations" if r >= m else None))
        ),
    ):
        assert not lesson00.stop_rule.evaluate(wrong)[0]
