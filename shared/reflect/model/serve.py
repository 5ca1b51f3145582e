"""Launcher for the shared local model server (run as `python -m reflect.model.serve ...`).

It is llama-cpp-python's own OpenAI-compatible FastAPI app with two additions:
- `/course/health`, which tells a client which process and model answer on this port;
- an idle watchdog: with no request in flight for `--idle-minutes`, the server exits by itself,
  so a forgotten server does not keep 1.5 GB of RAM and two cores busy.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path


def build_app(model: str, alias: str, n_ctx: int, n_threads: int, cache: bool, state: dict):
    """llama-cpp-python's OpenAI-compatible app for the model, with the course's routes."""
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    settings = ModelSettings(
        model=model,
        model_alias=alias,
        n_ctx=n_ctx,
        n_threads=n_threads,
        n_threads_batch=n_threads,
        cache=cache,
        cache_type="ram",
        verbose=True,  # per-request timings go to the log; the benchmark reads them
    )
    app = create_app(server_settings=ServerSettings(), model_settings=[settings])
    add_course_routes(app, model, alias, state)
    return app


def add_course_routes(app, model: str, alias: str, state: dict) -> None:
    """Activity tracking for the idle watchdog, and the health route the client checks."""

    @app.middleware("http")
    async def track_activity(request, call_next):
        state["inflight"] += 1
        try:
            return await call_next(request)
        finally:
            state["inflight"] -= 1
            state["last"] = time.monotonic()

    @app.get("/course/health")
    def health() -> dict:
        return {"pid": os.getpid(), "model_path": model, "model_alias": alias}


def main(argv: list[str] | None = None) -> None:
    """Start the shared local server (`python -m reflect.model.serve`)."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", required=True)
    p.add_argument("--alias", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--n-ctx", type=int, default=8192)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    # Off by default: with llama-cpp-python 0.3.36 the RAM prompt cache grew the server past
    # 23 GB resident after about 85 lesson-03 calls and the kernel's OOM killer stopped it.
    # llama.cpp still reuses the previous request's prefix without it.
    p.add_argument("--cache", action="store_true", help="turn on the RAM prompt cache (memory grows per request)")
    p.add_argument("--idle-minutes", type=float, default=30.0)
    p.add_argument("--state-file", default=None, help="the manager's record of this server, removed on exit")
    args = p.parse_args(argv)

    state = new_state()
    app = build_app(args.model, args.alias, args.n_ctx, args.threads, args.cache, state)
    run(app, args.port, args.idle_minutes, state, args.state_file)


def new_state() -> dict:
    """Fresh activity state for the idle watchdog."""
    return {"inflight": 0, "last": time.monotonic()}


def forget(state_file: str | None) -> None:
    """Remove the manager's state file if it still names this process (never another server's)."""
    if not state_file:
        return
    path = Path(state_file)
    try:
        if json.loads(path.read_text()).get("pid") == os.getpid():
            path.unlink()
    except (OSError, ValueError, AttributeError):
        pass


def run(app, port: int, idle_minutes: float, state: dict, state_file: str | None = None) -> None:
    """Serve on 127.0.0.1:port until stopped or idle for `idle_minutes`; on every clean exit
    (idle, SIGTERM, Ctrl-C) remove the state file, so no stale record names a reusable pid."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))

    def watchdog() -> None:
        limit = idle_minutes * 60
        while not server.should_exit:
            time.sleep(min(5.0, max(limit / 4, 0.05)))
            if state["inflight"] == 0 and time.monotonic() - state["last"] > limit:
                print(f"reflect.model.serve: idle for {idle_minutes} min, stopping.", flush=True)
                server.should_exit = True

    threading.Thread(target=watchdog, daemon=True).start()
    # uvicorn shuts down gracefully on SIGTERM and then re-raises it to the handler it found:
    # make that handler a SystemExit, so the `finally` below runs instead of a hard exit.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.run()
    finally:
        forget(state_file)


if __name__ == "__main__":
    main()
