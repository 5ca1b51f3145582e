"""tools/compare_runs.py: a live run's timing lines are ignored, a changed model output is not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("compare_runs", ROOT / "tools" / "compare_runs.py")
compare_runs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_runs)


def notebook(path: Path, *outputs: str) -> Path:
    nb = nbformat.v4.new_notebook()
    for text in outputs:
        cell = nbformat.v4.new_code_cell("print(...)")
        cell.outputs = [
            nbformat.v4.new_output("stream", name="stdout", text=text),
            nbformat.v4.new_output(
                "stream", name="stderr", text="runs: 40%|####  | 2/5 [00:03<00:04]"
            ),
        ]
        nb.cells.append(cell)
    nbformat.write(nb, path)
    return path


def test_timing_and_the_banner_are_ignored_and_a_changed_reply_is_reported(tmp_path):
    committed = notebook(
        tmp_path / "a.ipynb",
        "[reflect] backend=replay · replay\n"
        "generator        1       47       20       67        1.9    0.0000\nreading: 66 prompt tokens per second\n",
        "This run: 10 model calls, 2,979 tokens, 245 s of model time (about 4 min, replayed: the recording's time)\n",
        "def f():\n    return 1\n",
    )
    same = notebook(
        tmp_path / "b.ipynb",
        "[reflect] backend=local · live\n"
        "generator        1       47       20       67        1.4    0.0000\nreading: 72 prompt tokens per second\n",
        "This run: 10 model calls (3 answered from the cache, 912 tokens), 2,979 tokens, 51 s of model time (under a minute)\n",
        "def f():\n    return 1\n",
    )
    assert compare_runs.compare(same, committed) == []
    changed = notebook(
        tmp_path / "c.ipynb",
        "[reflect] backend=local · live\n"
        "generator        1       47       20       67        1.4    0.0000\nreading: 72 prompt tokens per second\n",
        "This run: 11 model calls, 3,001 tokens, 251 s of model time (about 4 min)\n",
        "def f():\n    return 2\n",
    )
    found = compare_runs.compare(changed, committed)
    assert [line.split(":")[0] for line in found] == ["c.ipynb code cell 1", "c.ipynb code cell 2"]
    assert "return 2" in found[1]


def test_a_progress_bar_drawn_as_a_widget_is_ignored(tmp_path):
    committed = notebook(tmp_path / "a.ipynb", "12 of 12 verdicts as recorded\n")
    live = nbformat.read(
        notebook(tmp_path / "b.ipynb", "12 of 12 verdicts as recorded\n"), as_version=4
    )
    live.cells[0].outputs.insert(
        0,
        nbformat.v4.new_output(
            "display_data",
            data={
                "application/vnd.jupyter.widget-view+json": {"model_id": "x"},
                "text/plain": "0%| | 0/3",
            },
        ),
    )
    nbformat.write(live, tmp_path / "b.ipynb")
    assert compare_runs.compare(tmp_path / "b.ipynb", committed) == []


def test_a_replayed_run_and_a_live_one_read_alike_where_only_the_mode_differs(tmp_path):
    committed = notebook(
        tmp_path / "a.ipynb",
        "This run: 8 model calls, 1,678 tokens, 28 s of model time (under a minute, replayed: the recording's time)\n",
        "results/01_one_shot.json (18 attempts)\n",
        "the live sample (replayed here: run live to compare): 7 of 7 verdicts as recorded\n",
    )
    live = notebook(
        tmp_path / "b.ipynb",
        "This run: 8 model calls, 1,678 tokens, 3 s of model time (under a minute)\n",
        "build/results/01_one_shot.json (18 attempts)\n",
        "the live sample: 7 of 7 verdicts as recorded\n",
    )
    assert compare_runs.compare(live, committed) == []
    other = notebook(
        tmp_path / "c.ipynb",
        "This run: 9 model calls, 1,678 tokens, 3 s of model time (under a minute)\n",
        "results/01_one_shot.json (18 attempts)\n",
        "the live sample: 7 of 7 verdicts as recorded\n",
    )
    assert len(compare_runs.compare(other, committed)) == 1
