"""Per-task results a lesson stores so later lessons can load them without re-running.

Files live in the course's `results/` folder as readable JSON, one per experiment, written
by the lesson that measured them (so a replayed run rewrites the same bytes).
"""

from __future__ import annotations

import json
from pathlib import Path

from .config import repo_root
from .evaluate import Attempt


def results_dir() -> Path:
    return repo_root() / "results"


def save_attempts(name: str, attempts: list[Attempt], meta: dict | None = None) -> Path:
    path = results_dir() / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"meta": meta or {}, "attempts": [a.as_dict() for a in attempts]}
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return path


def load_attempts(name: str) -> list[Attempt]:
    path = results_dir() / f"{name}.json"
    if not path.exists():
        lesson = name.split("_")[0]
        raise FileNotFoundError(f"No stored results {path.name}. Run lesson {lesson} first (make run NB={lesson}).")
    try:
        data = json.loads(path.read_text())
        return [Attempt(**row) for row in data["attempts"]]
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path} is not a results file this course wrote ({err}). Re-run the lesson that writes it.") from err
