"""Derive each learner notebook in notebooks/ from its twin in solutions/ (the source).

A solution cell carries `metadata.reflect.placeholder`: the learner's version replaces the
cell's source with that placeholder and drops its outputs, and the check cell after it (the next
code cell) keeps no output either: a learner sees no verdict and no hint before a try. Cells
tagged `solutions-only` are left out. Every code cell carries nbgrader's metadata (`nbgrader`): an answer cell,
the check of an exercise a grader counts (1 point; those graded on scripted models alone), or a locked cell, so that
`nbgrader autograde` (through `course.py grade`) grades the learner copies with the course's own cells. Every other cell is copied with the solution's outputs, so a
learner reading on the web sees the real run their finished lesson gives, and the two never drift
(tests/test_notebooks.py fails if notebooks/ is not what this script would produce, outputs
included). nbval runs the solutions and grades every check against its planted answers (tests/nbval_lessons.py).

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


def graded_keys() -> set[str]:
    """The exercises a grader counts: those graded on made-up cases and scripted models alone (`Exercise.scripted`:
    the check is a spec), so that a learner's own prompts cost nothing."""
    import importlib

    from course_checks import REGISTRY

    for module in ("00", "01", "02", "03", "03b", "04", "05", "06"):
        importlib.import_module(f"course_checks.lesson{module}")
    return {key for key, ex in REGISTRY.items() if ex.scripted}


def nbgrader(kind: str, grade_id: str) -> dict:
    """nbgrader's cell metadata (schema 3): the learner's answer, a graded check (1 point), or a locked cell that
    autograde restores from the release (so an edited check cell grades nothing)."""
    answer, graded = kind == "answer", kind == "check"
    meta = {"grade": graded, "grade_id": grade_id, "locked": not answer, "schema_version": 3}
    meta |= {"solution": answer, "task": False}
    return meta | ({"points": 1} if graded else {})


def learner_cells(solution: nbformat.NotebookNode, graded: set[str] = frozenset()) -> list[dict]:
    cells, check_next = [], None
    for cell in solution.cells:
        meta = cell.get("metadata", {})
        if "solutions-only" in meta.get("tags", []):
            continue
        placeholder = meta.get("reflect", {}).get("placeholder")
        new = copy.deepcopy(cell)
        if placeholder is not None or (check_next and cell.cell_type == "code"):
            new.outputs = []
            new.execution_count = None
        if placeholder is not None:
            key = meta["reflect"]["key"]
            new.source = placeholder
            new.metadata["reflect"] = {"exercise": True}
            new.metadata["nbgrader"] = nbgrader("answer", f"answer_{key.replace('.', '-')}")
            check_next = key
        elif cell.cell_type == "code":
            graded_check = check_next in graded
            new.metadata["nbgrader"] = nbgrader(
                "check" if graded_check else "given",
                f"check_{check_next.replace('.', '-')}"
                if graded_check
                else f"cell_{cell.get('id', len(cells))}",
            )
            check_next = None
        cells.append(new)
    return cells


def derive(solution_path: Path, learner_path: Path, check: bool) -> bool:
    """Return True if the learner notebook is what the solution derives (after writing it)."""
    sol = nbformat.read(solution_path, as_version=4)
    nb = copy.deepcopy(sol)
    nb.cells = learner_cells(sol, GRADED)
    if check:
        if not learner_path.exists():
            return False
        return nbformat.read(learner_path, as_version=4) == nb
    nbformat.write(nb, learner_path)
    return True


GRADED: set[str] = set()


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    GRADED.update(graded_keys())
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
