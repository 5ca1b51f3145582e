"""Derive each learner notebook in notebooks/ from its twin in solutions/ (the source).

A solution cell carries `metadata.reflect.placeholder`: the learner's version replaces the
cell's source with that placeholder and drops its outputs. Cells tagged `solutions-only`
are left out of the learner's version. Everything else is copied, so the two never drift
(tests/test_notebooks.py fails if notebooks/ is not what this script would produce).

    python tools/build_exercises.py            # rewrite notebooks/ sources from solutions/
    python tools/build_exercises.py --check    # exit 1 if they differ
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]


def learner_cells(solution: nbformat.NotebookNode) -> list[dict]:
    cells = []
    for cell in solution.cells:
        meta = cell.get("metadata", {})
        if "solutions-only" in meta.get("tags", []):
            continue
        placeholder = meta.get("reflect", {}).get("placeholder")
        new = copy.deepcopy(cell)
        if placeholder is not None:
            new.source = placeholder
            new.outputs = []
            new.execution_count = None
            new.metadata["reflect"] = {"exercise": True}
        cells.append(new)
    return cells


def _sources(cells) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source) for c in cells]


def derive(solution_path: Path, learner_path: Path, check: bool) -> bool:
    """Return True if the learner notebook's sources match the derived ones (after writing)."""
    sol = nbformat.read(solution_path, as_version=4)
    cells = learner_cells(sol)
    if learner_path.exists():
        old = nbformat.read(learner_path, as_version=4)
        if _sources(old.cells) == _sources(cells):
            return True
        if check:
            return False
        # keep outputs of unchanged cells; changed cells lose theirs until the next execution
        old_by_source = {(c.cell_type, c.source): c for c in old.cells}
        cells = [old_by_source.get((c.cell_type, c.source), c) for c in cells]
    elif check:
        return False
    nb = copy.deepcopy(sol)
    nb.cells = cells
    nbformat.write(nb, learner_path)
    return True


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    bad = []
    for sol in sorted((ROOT / "solutions").glob("[0-9][0-9]*_*.ipynb")):
        if not derive(sol, ROOT / "notebooks" / sol.name, args.check):
            bad.append(sol.name)
    if bad:
        print(
            "notebooks/ differs from what solutions/ derives: "
            + ", ".join(bad)
            + " (run `make notebooks`)"
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
