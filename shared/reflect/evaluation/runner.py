"""Run strategies over tasks into a JSON Lines file that an interrupted run resumes.

One line per finished (strategy, task), keyed by the strategy's configuration; the same call
on the same file does only what is missing. What a line holds: docs/package.md, "The modules
in detail".
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import threading
import warnings
from collections.abc import Callable, Iterable
from enum import Enum
from pathlib import Path
from typing import Any

from ..judging.hidden import hidden_lines_in_prompts, judge
from ..model.parallel import parallel_map
from ..model.roles import SAMPLING
from ..records import KEYED_WHEN_SET, Run, Strategy
from ..tasks.prompts import fingerprint
from ..tasks.task import Task, get_task
from .report import verdicts_beside
from .results import LIVE_SAMPLE


def config_of(strategy: Strategy) -> dict[str, Any]:
    """What identifies a strategy's setup in the results file, so that a run resumes only what it ran
    (docs/package.md, 'The modules in detail'). A course strategy names the roles it calls (`ROLES`) and the
    prompts it sends (`prompts()`): its type, every setting, those roles' sampling and a fingerprint of the
    prompts. Any other strategy: its fields as plain values."""
    if not hasattr(strategy, "ROLES"):
        return plain(strategy)
    return {
        "strategy": type(strategy).__name__,
        **settings(strategy),
        "role_sampling": {role: plain(SAMPLING[role]) for role in strategy.ROLES},
        "prompts": fingerprint(getattr(strategy, "prompts", tuple)()),
    }


def plain(value: Any) -> Any:
    """A setting as plain JSON values (docs/package.md, 'The modules in detail'), equal after a JSON round trip."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"type": type(value).__name__, **settings(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{value.__module__}.{value.__qualname__}"
    return type(value).__name__


def settings(obj: Any) -> dict[str, Any]:
    """A dataclass's settings as plain values: every field but those marked `repr=False`, which hold
    a run's own bookkeeping (what it ran, where it stops), not its setup. A field added after runs were
    recorded (metadata `KEYED_WHEN_SET`) is keyed only when it differs from its default, so the runs made
    before it keep their key."""
    return {
        f.name: plain(getattr(obj, f.name))
        for f in dataclasses.fields(obj)
        if f.repr and not (f.metadata.get(KEYED_WHEN_SET) and getattr(obj, f.name) == f.default)
    }


def load_rows(path: Path) -> list[dict[str, Any]]:
    """Every complete line of a results file (none if it does not exist); a cut-off line is skipped."""
    path = Path(path)
    if not path.exists():
        return []
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            Run.from_dict(row["run"])
        except (ValueError, KeyError, TypeError) as err:
            warnings.warn(
                f"{path}:{n}: skipped an incomplete or foreign line ({err}); it will be run again",
                stacklevel=2,
            )
            continue
        rows.append(row)
    return rows


def current_rows(
    path: Path,
    strategies: Iterable[Strategy] | None = None,
    task_ids: Iterable[str] | None = None,
    loaded: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """The lines a report reads: for each (strategy, task) the latest line whose configuration is
    the strategy's current one. Current means that of `strategies` when given (the others'
    lines are left out), otherwise that of each strategy's last line in the file. With
    `task_ids`, only those tasks, in that order; otherwise tasks in the order they first appear.
    Rows come strategy by strategy (in `strategies`' order, or the file's), then task by task.
    `loaded` is the file's `load_rows`, when the caller has read it already."""
    rows = load_rows(path) if loaded is None else loaded
    if strategies is not None:
        configs = {s.name: config_of(s) for s in strategies}
    else:
        configs = {r["strategy"]: r.get("config") for r in rows}  # each strategy's last line wins
    latest = {
        (r["strategy"], r["task_id"]): r
        for r in rows
        if r["strategy"] in configs and r.get("config") == configs[r["strategy"]]
    }
    tasks = list(dict.fromkeys(task_ids if task_ids is not None else (r["task_id"] for r in rows)))
    return [latest[(s, t)] for s in configs for t in tasks if (s, t) in latest]


def _seen_by(chat: Callable, prompts: list[str], replies: list[str]) -> Callable:
    """`chat` that also keeps every message it sends (in `prompts`) and every reply text (in `replies`),
    for the leak check (`hidden_lines_in_prompts`)."""

    def seen(messages: list[dict], role: str = "generator", **params):
        prompts.extend(str(m.get("content", "")) for m in messages)
        reply = chat(messages, role=role, **params)
        replies.append(getattr(reply, "text", "") or "")
        return reply

    return seen


def _judge_drafts(task: Task, run: Run) -> dict[str, bool]:
    """{step index: hidden tests pass} for every step that wrote a draft (each distinct draft
    is run once; the final draft's verdict is the run's own when it has one)."""
    verdicts: dict[str, bool] = {run.final_code: run.passed} if run.passed is not None else {}
    out = {}
    for step in run.steps:
        if step.code is None:
            continue
        if step.code not in verdicts:
            verdicts[step.code] = judge(task, step.code).passed if step.code.strip() else False
        out[str(step.index)] = verdicts[step.code]
    return out


def run_bench(
    strategies: Iterable[Strategy],
    tasks: Iterable[Task],
    chat: Callable,
    path: Path,
    concurrency: int = 1,
    progress: bool = True,
    meta: dict | None = None,
) -> list[Run]:
    """Each strategy on each task, resuming from `path`; the runs in (strategy, task) order."""
    strategies, tasks, path = list(strategies), list(tasks), Path(path)
    names = [s.name for s in strategies]
    if len(set(names)) != len(names):
        raise ValueError(f"strategy names must be unique (they key the results file), got {names}")
    configs = {s.name: config_of(s) for s in strategies}
    model, loaded = (meta or {}).get("model"), load_rows(path)
    others = {r.get("meta", {}).get("model") for r in loaded} - {model, None}
    if model and others:
        raise ValueError(
            f"{path} holds runs of another model ({', '.join(sorted(others))}); this run is on "
            f"{model}. Give it its own results file (--out): nothing was run or written."
        )
    done = {
        (r["strategy"], r["task_id"]): Run.from_dict(r["run"])
        for r in current_rows(path, strategies, loaded=loaded)
    }
    todo = [(s, t) for t in tasks for s in strategies if (s.name, t.id) not in done]
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = threading.Lock()

    def one(job: tuple[Strategy, Task]) -> None:
        strategy, task = job
        prompts: list[str] = []
        replies: list[str] = []
        run = strategy.run(task, _seen_by(chat, prompts, replies))
        line = (
            json.dumps(
                {
                    "strategy": strategy.name,
                    "task_id": task.id,
                    "config": configs[strategy.name],
                    "meta": meta or {},
                    "run": run.to_dict(),
                    "drafts": _judge_drafts(task, run),
                    "leaks": hidden_lines_in_prompts(task, prompts, replies),
                },
                ensure_ascii=False,
            )
            + "\n"
        )
        with lock:
            with path.open("a", encoding="utf-8") as f:
                f.write(line)
                f.flush()
                os.fsync(f.fileno())
            done[(strategy.name, task.id)] = run

    parallel_map(one, todo, workers=concurrency, desc="runs", progress=progress and bool(todo))
    return [done[(s.name, t.id)] for s in strategies for t in tasks]


def live_sample(
    strategies: Iterable[Strategy],
    chat: Callable,
    recorded: list[dict[str, Any]],
    task_ids: Iterable[str] = LIVE_SAMPLE,
    meta: dict | None = None,
    progress: bool = True,
) -> tuple[list[dict[str, Any]], int, int, list[str]]:
    """A lesson's live sample: the strategies on a few tasks (by default the course's stated
    sample, `LIVE_SAMPLE`), one request at a time, into a scratch file (so the sample always runs,
    in replay from the cassette), compared with the recording: (the sample's rows, verdicts as
    recorded, verdicts compared, one line per verdict that moved)."""
    strategies, ids = list(strategies), list(task_ids)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "sample.jsonl"
        tasks = [get_task(t) for t in ids]
        run_bench(strategies, tasks, chat, path, concurrency=1, progress=progress, meta=meta)
        rows = current_rows(path, strategies, ids)
    return (rows, *verdicts_beside(recorded, rows))
