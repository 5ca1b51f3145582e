"""`connect()`, the course's one way into a model: the client (`reflect.model.llm.connect`) with the
local runtime that starts, and restarts, the default model's server (`manager.ensure_server`), and its
disk cache of the model's replies (`response_cache`).

With `COURSE_CELL_LOG=<file>` set (benchmarks/bench_course_run.py sets it), a connection made in a notebook
appends one JSON line per executed cell to that file: the lesson, the cell's first line, its wall seconds, and
the model calls it made (how many the cache answered), their tokens and their model seconds."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import httpx

from reflect.model import llm
from reflect.model.config import Settings

from . import response_cache
from .manager import ensure_server


def connect(
    notebook: str | None = None,
    *,
    settings: Settings | None = None,
    transport: httpx.BaseTransport | None = None,
    quiet: bool = False,
) -> llm.Connection:
    """A ready connection to the configured model, with one banner line (`reflect.model.llm.connect`,
    whose settings, backends and cassettes it takes); the local backend's server comes from here."""
    conn = llm.connect(
        notebook,
        settings=settings,
        transport=transport,
        quiet=quiet,
        local=ensure_server,
        cache_for=response_cache.for_server,
    )
    if os.environ.get("COURSE_CELL_LOG"):
        log_cells(conn, Path(os.environ["COURSE_CELL_LOG"]), notebook or "")
    return conn


def log_cells(conn: llm.Connection, path: Path, lesson: str) -> bool:
    """In IPython, append a line per executed cell to `path` (the module docstring); False outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    mark = {"t": time.perf_counter(), "n": len(conn.ledger.records)}

    def before(info) -> None:  # noqa: ANN001 - IPython's ExecutionInfo
        mark.update(t=time.perf_counter(), n=len(conn.ledger.records))

    def after(result) -> None:  # noqa: ANN001 - IPython's ExecutionResult
        calls = conn.ledger.records[mark["n"] :]
        source = (result.info.raw_cell or "").strip().splitlines()
        line = {
            "lesson": lesson,
            "cell": source[0][:80] if source else "",
            "wall_s": round(time.perf_counter() - mark["t"], 2),
            "calls": len(calls),
            "cached": sum(c.cached for c in calls),
            "tokens": sum(c.prompt_tokens + c.completion_tokens for c in calls),
            "model_s": round(sum(c.latency_s for c in calls if not c.cached), 2),
        }
        with path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")

    shell.events.register("pre_run_cell", before)
    shell.events.register("post_run_cell", after)
    return True
