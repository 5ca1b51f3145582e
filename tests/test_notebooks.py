"""The lessons: learner notebooks derive from solutions, keep real outputs, follow the lesson shape."""

import functools
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = sorted((ROOT / "solutions").glob("[0-9][0-9]*_*.ipynb"))
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))


def test_every_lesson_has_both_versions_and_a_cassette():
    assert SOLUTIONS, "no lessons found"
    assert [p.name for p in NOTEBOOKS] == [p.name for p in SOLUTIONS]
    for p in SOLUTIONS:
        assert (ROOT / "cassettes" / f"{p.stem}.yaml").exists(), (
            f"no cassette for {p.name}: make record NB={p.name[:2]}"
        )


def test_learner_notebooks_are_derived_from_solutions():
    res = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_exercises.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("path", NOTEBOOKS + SOLUTIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_lesson_shape(path):
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith(
        f"# {path.name.split('_')[0]} "
    )
    for needle in ("Learning objectives", "Prerequisites", "Time to run"):
        assert needle in first.source, f"{path.name}: first cell lacks {needle!r}"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert f'connect("{path.stem}")' in code[1].source, (
        "the second code cell connects and prints the banner"
    )
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    for heading in ("## exercises", "## summary", "what can go wrong", "when not to use"):
        assert heading in text.lower(), f"{path.name} lacks {heading!r}"
    exercises = [
        c
        for c in code
        if c.metadata.get("reflect", {}).get("placeholder")
        or c.metadata.get("reflect", {}).get("exercise")
    ]
    assert len(exercises) >= 3, f"{path.name} has {len(exercises)} exercises"
    checks = [c for c in code if re.fullmatch(r"ex\.\w+\(.*\)", c.source.strip(), flags=re.S)]
    assert len(checks) >= len(exercises), "every exercise needs a check cell: one call ex.NAME(...)"


@pytest.mark.parametrize("path", NOTEBOOKS + SOLUTIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_committed_with_outputs_and_no_errors(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    placeholders = [c for c in code if c.metadata.get("reflect", {}).get("exercise")]
    checks = [c for c in code if re.fullmatch(r"ex\.\w+\(.*\)", c.source.strip(), flags=re.S)]
    # a learner copy's own cells and checks are empty until the learner runs them
    unrun = placeholders + checks if path.parent.name == "notebooks" else []
    assert all(c.execution_count for c in code if not any(c is u for u in unrun)), (
        f"{path.name} has unexecuted cells: make notebooks"
    )
    assert any(c.outputs for c in code)
    for c in code:
        for out in c.outputs:
            assert out.output_type != "error", f"{path.name}: a cell raised {out.get('ename')}"
    assert "NBVAL_IGNORE_OUTPUT" not in json.dumps([c.source for c in code]), (
        "model output must not be ignored"
    )
    assert len(placeholders) == 0 or path.parent.name == "notebooks"


def lines_to_read(source: str) -> int:
    """A cell's lines, an import's names wrapped one per line counted as the import's first line."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return len(source.splitlines())
    wrapped = sum(
        n.end_lineno - n.lineno for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)
    )
    return len(source.splitlines()) - wrapped


def test_no_cell_is_too_long():
    """A course cell reads at a glance (25 lines); a cell the learner writes holds one build, such as a
    graph's state, nodes and edges (40 lines). A long import, wrapped a name a line, is one line."""
    assert lines_to_read("from m import (\n    a,\n    b,\n)\nprint(a)\n") == 2
    for path in SOLUTIONS:
        for c in nbformat.read(path, as_version=4).cells:
            if c.cell_type == "code":
                limit = 40 if c.metadata.get("reflect") else 25
                assert lines_to_read(c.source) <= limit, (
                    f"{path.name}: a code cell has more than {limit} lines"
                )


WIDGET = "application/vnd.jupyter.widget-view+json"


def widget_outputs_without_a_static_view(path: Path) -> list[str]:
    """Cells whose saved widget would show nothing readable without a kernel."""
    bad = []
    for i, cell in enumerate(json.loads(path.read_text())["cells"]):
        outs = cell.get("outputs", [])
        for k, out in enumerate(outs):
            if WIDGET not in out.get("data", {}):
                continue
            static = [
                o
                for o in outs[:k]
                if o.get("output_type") == "stream" or "text/html" in o.get("data", {})
            ]
            text = "".join(out["data"].get("text/plain", ""))
            if not static or not text.startswith("[interactive"):
                bad.append(f"cell {i}: {text[:60]!r}")
    return bad


@pytest.mark.parametrize("path", SOLUTIONS + NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_saved_widget_has_a_static_view_above_it(path):
    assert widget_outputs_without_a_static_view(path) == []


def test_the_widget_check_sees_a_bare_widget(tmp_path):
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "source": "w",
                "metadata": {},
                "outputs": [
                    {
                        "output_type": "execute_result",
                        "data": {WIDGET: {}, "text/plain": "VBox(children=(IntSlider(value=0,"},
                    }
                ],
            }
        ]
    }
    (tmp_path / "x.ipynb").write_text(json.dumps(nb))
    assert widget_outputs_without_a_static_view(tmp_path / "x.ipynb") == [
        "cell 0: 'VBox(children=(IntSlider(value=0,'"
    ]


@functools.cache
def _run_notebooks():
    """tools/run_notebooks.py, the script that writes the committed notebooks, as a module."""
    spec = importlib.util.spec_from_file_location(
        "run_notebooks", ROOT / "tools" / "run_notebooks.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _course_kernelspec() -> dict:
    return _run_notebooks().course_kernelspec()


@pytest.mark.parametrize("path", SOLUTIONS + NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_opening_and_saving_a_lesson_in_the_course_environment_changes_nothing(path):
    """JupyterLab writes the running kernel's spec into a notebook it opens and saves it the way
    nbformat does; a lesson committed that way is not 'modified' by being opened. (A machine
    on another Python version still updates `language_info.version`: one line.)"""
    raw = path.read_text()
    nb = nbformat.reads(raw, as_version=4)
    nb.metadata["kernelspec"] = _course_kernelspec()
    assert nbformat.writes(nb) + "\n" == raw


def _numbers(node):
    if isinstance(node, dict):
        for v in node.values():
            yield from _numbers(v)
    elif isinstance(node, list):
        for v in node:
            yield from _numbers(v)
    elif isinstance(node, float):
        yield node


@pytest.mark.parametrize("path", NOTEBOOKS + SOLUTIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_number_that_jupyterlab_would_write_back_differently(path):
    """JupyterLab saves JSON through JavaScript, where 8.0 is 8: a committed 8.0 (a widget's saved
    state) makes a lesson change on its first save (`make test-browser` opens and saves each)."""
    whole = [x for x in _numbers(json.loads(path.read_text())) if x.is_integer()]
    assert not whole, (
        f"{path.name}: {len(whole)} floats with no fraction, e.g. {whole[:3]}: make notebooks"
    )


ESCAPED_CODE = re.compile(r"\\n\s*(def|return|import|class|for|if)\b|def \w+\(.*\\n")
REPRS = ("ForwardRef(", "VBox(", "HBox(", "<function ", " object at 0x")


@pytest.mark.parametrize("path", NOTEBOOKS + SOLUTIONS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_output_is_short_and_shows_code_as_code(path):
    """No cell prints more than 40 lines, code with escaped newlines, or an object's bare repr."""
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        texts = [
            out.get("text", "") + "".join(out.get("data", {}).get("text/plain", ""))
            for out in cell.get("outputs", [])
            if out.get("output_type") != "error"
        ]
        shown = "".join(texts)
        where = f"{path.name} cell {i} ({cell.get('id')})"
        assert shown.count("\n") <= 40, f"{where} prints {shown.count(chr(10))} lines (at most 40)"
        assert not ESCAPED_CODE.search(shown), (
            f"{where} prints code with escaped newlines: show it as code"
        )
        assert not [r for r in REPRS if r in shown], (
            f"{where} prints a bare repr: {[r for r in REPRS if r in shown]}"
        )


def test_refreshed_notebooks_are_written_with_javascripts_numbers():
    saved = _run_notebooks().as_saved_by_jupyterlab(
        {"state": {"value": 8.0, "step": 0.5, "on": True, "max": [10.0, "10.0"]}}
    )
    assert (
        json.dumps(saved) == '{"state": {"value": 8, "step": 0.5, "on": true, "max": [10, "10.0"]}}'
    )


def test_refreshed_notebooks_join_each_run_of_one_streams_pieces():
    def out(kind, **kw):
        return nbformat.from_dict({"output_type": kind, **kw})

    pieces = [
        out("stream", name="stdout", text="a\n"),
        out("stream", name="stdout", text="b\n"),
        out("stream", name="stderr", text="warn\n"),
        out("stream", name="stdout", text="c\n"),
        out("display_data", data={"text/plain": "x"}, metadata={}),
        out("stream", name="stdout", text="d"),
        out("stream", name="stdout", text="\n"),
    ]
    joined = _run_notebooks().joined_streams(pieces)
    assert [(o.output_type, o.get("name"), o.get("text")) for o in joined] == [
        ("stream", "stdout", "a\nb\n"),
        ("stream", "stderr", "warn\n"),
        ("stream", "stdout", "c\n"),
        ("display_data", None, None),
        ("stream", "stdout", "d\n"),
    ]


def lesson_imports() -> dict[str, set[str]]:
    """{name: the reflect modules the solved lessons import it from}."""
    import ast

    found: dict[str, set[str]] = {}
    for path in SOLUTIONS:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            lines = [x for x in cell.source.splitlines() if not x.lstrip().startswith(("%", "!"))]
            for node in ast.walk(ast.parse("\n".join(lines))):
                if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("reflect"):
                    for alias in node.names:
                        found.setdefault(alias.name, set()).add(node.module)
    return found


def test_each_name_a_lesson_imports_comes_from_one_module():
    """A learner meets each of the package's names under one import path, never a private one."""
    found = lesson_imports()
    assert {n: sorted(m) for n, m in found.items() if len(m) > 1} == {}
    assert [n for n in found if n.startswith("_")] == []


def test_lessons_import_from_the_layer_packages_only():
    """`from reflect.judging import judge`, never `from reflect.judging.hidden import judge`: each name a
    lesson imports is one its layer package (or `reflect` itself) exports, or a module of that layer."""
    import importlib

    from tests.test_layers import LAYERS

    packages = {"reflect"} | {f"reflect.{layer}" for layer in LAYERS if layer != "records"}
    for name, modules in lesson_imports().items():
        (module,) = modules
        assert module in packages, f"{name} is imported from {module}, not from a layer package"
        package = importlib.import_module(module)
        exported = name in package.__all__ or importlib.util.find_spec(f"{module}.{name}")
        assert exported, f"{module} does not export {name}"
