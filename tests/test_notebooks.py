"""The lessons: learner notebooks derive from solutions, keep real outputs, follow the lesson shape."""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_every_lesson_has_both_versions_and_a_cassette():
    assert SOLUTIONS, "no lessons found"
    assert [p.name for p in NOTEBOOKS] == [p.name for p in SOLUTIONS]
    for p in SOLUTIONS:
        assert (ROOT / "cassettes" / f"{p.stem}.yaml").exists(), f"no cassette for {p.name}: make record NB={p.name[:2]}"


def test_learner_notebooks_are_derived_from_solutions():
    res = subprocess.run([sys.executable, str(ROOT / "tools" / "build_exercises.py"), "--check"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("path", NOTEBOOKS + SOLUTIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_lesson_shape(path):
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith(f"# {path.name[:2]} ")
    for needle in ("Learning objectives", "Prerequisites", "Time to run"):
        assert needle in first.source, f"{path.name}: first cell lacks {needle!r}"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert f'connect("{path.stem}")' in code[1].source, "the second code cell connects and prints the banner"
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for heading in ("## exercises", "## summary", "what can go wrong", "when not to use"):
        assert heading in text.lower(), f"{path.name} lacks {heading!r}"
    exercises = [c for c in code if c.metadata.get("reflect", {}).get("placeholder") or c.metadata.get("reflect", {}).get("exercise")]
    assert len(exercises) >= 3, f"{path.name} has {len(exercises)} exercises"
    assert sum("grade(" in c.source for c in code) >= len(exercises), "every exercise needs a check cell"


@pytest.mark.parametrize("path", NOTEBOOKS + SOLUTIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_committed_with_outputs_and_no_errors(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    placeholders = [c for c in code if c.metadata.get("reflect", {}).get("exercise")]
    assert all(c.execution_count for c in code), f"{path.name} has unexecuted cells: make notebooks"
    assert any(c.outputs for c in code)
    for c in code:
        for out in c.outputs:
            assert out.output_type != "error", f"{path.name}: a cell raised {out.get('ename')}"
    assert "NBVAL_IGNORE_OUTPUT" not in json.dumps([c.source for c in code]), "model output must not be ignored"
    assert len(placeholders) == 0 or path.parent.name == "notebooks"


def test_no_cell_is_too_long():
    for path in SOLUTIONS:
        for c in nbformat.read(path, as_version=4).cells:
            if c.cell_type == "code":
                assert len(c.source.splitlines()) <= 25, f"{path.name}: a code cell has more than 25 lines"
