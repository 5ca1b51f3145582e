"""Per-task results a lesson stores so later lessons can load them without re-running, as readable JSON:
in replay and record, the committed `results/` folder (a replayed run rewrites the same bytes); on a live
model, `build/results/` (ignored by git), so your runs never overwrite the recorded ones, and loading prefers
them, falling back to the recorded ones.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict
from datetime import date
from pathlib import Path
from typing import Any

from ..judging.hidden import Attempt
from ..model.config import Settings, repo_root


def recorded_dir() -> Path:
    """The committed results folder that replay and nbval read."""
    return repo_root() / "results"


def _live_dir() -> Path:
    """Where a live run writes its results (ignored by git)."""
    return repo_root() / "build" / "results"


def results_dir() -> Path:
    """Where this run writes: see the module docstring."""
    return recorded_dir() if Settings.from_env().backend in ("replay", "record") else _live_dir()


def save_attempts(name: str, attempts: list[Attempt], meta: dict | None = None) -> Path:
    """Store a lesson's attempts as readable JSON under `name`; returns the file."""
    path = results_dir() / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"meta": meta or {}, "attempts": [asdict(a) for a in attempts]}
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    return path


def load_attempts(name: str) -> list[Attempt]:
    """Load a lesson's stored attempts (your live run first, else the recorded one)."""
    path = results_dir() / f"{name}.json"
    if not path.exists() and results_dir() != recorded_dir():
        # no live run of that lesson yet: use the recorded one
        path = recorded_dir() / f"{name}.json"
    if not path.exists():
        lesson = name.split("_")[0]
        raise FileNotFoundError(
            f"No stored results {path.name}. Run lesson {lesson} first (make run NB={lesson})."
        )
    try:
        data = json.loads(path.read_text())
        return [Attempt(**row) for row in data["attempts"]]
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(
            f"{path} is not a results file this course wrote ({err}). Re-run the lesson that writes it."
        ) from err


# The course tasks a lesson re-runs live beside its recording: no more than the difference the sample must be able to
# show. running_average is the one task of the three stated before (unique, running_average, median) on which the
# recorded runs differ: lesson 01's draft fails it, the test critics reject it, Reflexion and resampling repair it,
# the other loops do not; on the other two every strategy, critic and memory mode passed or accepted alike.
LIVE_SAMPLE = ["running_average"]


def full_run() -> bool:
    """True when `COURSE_FULL=1`: a lesson re-runs its whole experiment live instead of reading
    the recording and re-running a stated sample of it."""
    return os.environ.get("COURSE_FULL", "").strip() == "1"


def recording_meta(conn, command: str, concurrency: int = 1) -> dict[str, Any]:
    """What a recording states about itself: model, engine, date, requests at a time, command."""
    engine = {"local": "llama.cpp server (the course's local engine)", "openai": conn.base_url}.get(
        conn.live_backend, conn.live_backend
    )
    return {
        "model": conn.model,
        "engine": engine,
        "date": date.today().isoformat(),
        "concurrency": concurrency,
        "command": command,
    }


def describe(meta: Mapping[str, Any]) -> str:
    """A recording's provenance in one phrase (empty when it states none)."""
    if not meta:
        return ""
    return (
        f"model {meta.get('model', '?')}, {meta.get('engine', 'engine not recorded')}, recorded "
        f"{meta.get('date', '?')}, {meta.get('concurrency', 1)} request(s) at a time, by `{meta.get('command', '?')}`"
    )


def recorded_experiment(
    name: str, compute: Callable[[], dict], full: bool, meta: Mapping[str, Any] | None = None
) -> tuple[dict, str]:
    """A lesson's big experiment as (data, where it came from, with the recording's provenance):
    the committed recording, `results/<name>.json`, unless `full` is set or nothing is committed
    yet; then `compute()` runs it, and the result is written with `meta` to `results_dir()` (your
    own run goes to `build/results/`; recording a lesson writes the committed file)."""
    recorded = recorded_dir() / f"{name}.json"
    if recorded.exists() and not full:
        try:
            stored = json.loads(recorded.read_text())
            data, said = stored["data"], describe(stored.get("meta") or {})
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(
                f"{recorded} is not a results file this course wrote ({err}). "
                f"Re-record the lesson: COURSE_FULL=1 make record NB={name.split('_')[0]}"
            ) from err
        return data, f"the recording ({said})" if said else "the recording"
    data = compute()
    path = results_dir() / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"meta": dict(meta or {}), "data": data}, indent=1, ensure_ascii=False) + "\n"
    )
    return (
        data,
        "your run"
        if results_dir() != recorded_dir()
        else f"the recording ({describe(meta or {})})",
    )
