"""The course's local model server: llama.cpp's own HTTP server, in a process the course supervises.

Run as `python -m course_runtime.server_process --model M --alias A --port P` (the manager in
`course_runtime.manager` does this). Two engines serve the same llama.cpp HTTP API
(`/health`, `/props`, `/metrics`, `/v1/chat/completions` with `json_schema`, parallel slots):

- `xllamacpp` (default): the prebuilt `xllamacpp` wheel runs llama.cpp's server in this process;
- `llama-server`: llama.cpp's binary as a child process (built once, see `course_runtime.fallback_build`).

Around the engine this process adds what a shared course server needs:
- it binds 127.0.0.1 (unless `--host` says otherwise) and requires an API key, read from the
  environment (COURSE_SERVER_KEY, never the command line, which any user can read with `ps`);
- an idle watchdog: no token processed for `--idle-minutes` and it exits by itself;
- on every clean exit (idle, SIGTERM, Ctrl-C) it removes the manager's state file.

Exit codes the manager reads: 3 the model file could not be loaded, 4 the engine is not
installed, 70 the engine stopped on its own; a crash shows as death by a signal.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

KEY_ENV = "COURSE_SERVER_KEY"
EXIT_MODEL, EXIT_ENGINE_MISSING, EXIT_ENGINE_DIED = 3, 4, 70
ENGINES = ("xllamacpp", "llama-server")


@dataclass(frozen=True)
class EngineSettings:
    """The server settings the course chose by measurement (docs/models.md, "The local engine")."""

    model: str
    alias: str
    port: int
    key: str
    host: str = (
        "127.0.0.1"  # the course's own server: this machine only; a classroom server: 0.0.0.0
    )
    slots: int = 4  # parallel requests; 4 gave the best aggregate throughput on 2 cores
    ctx_per_slot: int = 8192  # the longest lesson thread is about 3k tokens
    threads: int = os.cpu_count() or 2
    speculative: bool = True  # n-gram drafts: same output at temperature 0, faster revisions
    # The prompt cache is off: a request whose prefix was cached is evaluated in different
    # batches, and at temperature 0 its reply can differ from a cold one. Off, a live run
    # reproduces the recorded outputs whatever ran before it on the server.
    cache_prompt: bool = False
    # A thread that ends with an assistant message gets a new assistant turn, as on OpenAI.
    # llama.cpp's default continues that message instead (and refuses two in a row), which is
    # not what a maker-checker thread, ending with the reviewer's words, means.
    prefill_assistant: bool = False


class Engine:
    """What the supervisor needs from an engine: start, alive, stop."""

    def start(self, s: EngineSettings) -> None:
        """Load the model and listen on 127.0.0.1:s.port; SystemExit with an exit code on failure."""
        raise NotImplementedError

    def alive(self) -> bool:
        """False once the engine has stopped on its own."""
        return True

    def stop(self) -> None:
        """Stop serving."""


class XllamacppEngine(Engine):
    """llama.cpp's server inside this process, from the prebuilt xllamacpp wheel."""

    def start(self, s: EngineSettings) -> None:
        """Build llama.cpp's CommonParams from the settings and start the server."""
        try:
            import xllamacpp as xlc
        except ImportError as err:
            print(
                f"course_runtime.server_process: the xllamacpp engine is not installed ({err}).",
                flush=True,
            )
            raise SystemExit(EXIT_ENGINE_MISSING) from None
        p = xlc.CommonParams()
        p.model.path = s.model
        p.model_alias = {s.alias}  # a set of names in this version
        p.n_parallel = s.slots
        p.n_ctx = s.slots * s.ctx_per_slot
        p.cpuparams.n_threads = s.threads
        p.cpuparams_batch.n_threads = s.threads
        p.hostnames = [s.host]
        p.port = s.port
        p.api_keys = [s.key]
        p.endpoint_metrics = True
        p.cache_prompt = s.cache_prompt
        p.prefill_assistant = s.prefill_assistant
        if s.speculative:
            p.speculative.types = [xlc.common_speculative_type.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE]
        try:
            self.server = xlc.Server(p)
        except RuntimeError as err:  # llama.cpp logged why (a bad or truncated GGUF file, ...)
            print(
                f"course_runtime.server_process: the model could not be loaded: {err}", flush=True
            )
            raise SystemExit(EXIT_MODEL) from None


class LlamaServerEngine(Engine):
    """llama.cpp's `llama-server` binary as a child process (the fallback engine)."""

    def __init__(self, binary: str):
        self.binary = binary
        self.proc: subprocess.Popen | None = None

    def command(self, s: EngineSettings) -> list[str]:
        """The llama-server command line for these settings (the key goes in the environment)."""
        cmd = [
            self.binary,
            "-m",
            s.model,
            "--alias",
            s.alias,
            "--host",
            s.host,
            "--port",
            str(s.port),
            "-np",
            str(s.slots),
            "-c",
            str(s.slots * s.ctx_per_slot),
            "-t",
            str(s.threads),
            "-tb",
            str(s.threads),
            "--metrics",
            "--no-webui",
        ]
        if not s.cache_prompt:
            cmd.append("--no-cache-prompt")
        if not s.prefill_assistant:
            cmd.append("--no-prefill-assistant")
        if s.speculative:
            cmd += ["--spec-type", "ngram-simple"]
        return cmd

    def start(self, s: EngineSettings) -> None:
        """Start the binary with LLAMA_API_KEY set; it dies with this process (PDEATHSIG)."""
        if not (Path(self.binary).is_file() and os.access(self.binary, os.X_OK)):
            print(
                f"course_runtime.server_process: no llama-server binary at {self.binary}.",
                flush=True,
            )
            raise SystemExit(EXIT_ENGINE_MISSING)
        env = {**os.environ, "LLAMA_API_KEY": s.key}
        self.proc = subprocess.Popen(
            self.command(s), env=env, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent
        )

    def alive(self) -> bool:
        """True while the child runs."""
        return self.proc is not None and self.proc.poll() is None

    def stop(self) -> None:
        """SIGTERM the child, SIGKILL after 10 s."""
        if self.alive():
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _die_with_parent() -> None:
    try:  # Linux: the child gets SIGTERM if this supervisor dies, even by SIGKILL
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def activity(port: int, key: str) -> tuple[float, bool] | None:
    """(tokens processed so far, a request in flight) from the engine's /metrics; None if it did not answer."""
    try:
        text = httpx.get(
            f"http://127.0.0.1:{port}/metrics",
            headers={"Authorization": f"Bearer {key}"},
            timeout=5,
        ).text
    except httpx.HTTPError:
        return None
    values = {m[1]: float(m[2]) for m in re.finditer(r"^llamacpp:(\w+) ([0-9.eE+-]+)$", text, re.M)}
    tokens = values.get("prompt_tokens_total", 0.0) + values.get("tokens_predicted_total", 0.0)
    return tokens, values.get("requests_processing", 0.0) > 0


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


def _nap(seconds: float, stopping: list[str]) -> None:
    """Sleep `seconds`, cut short by a signal: a handler that returns does not end `time.sleep`, so a stop would
    wait out the whole interval."""
    until = time.monotonic() + seconds
    while not stopping and time.monotonic() < until:
        time.sleep(min(0.05, seconds))


def supervise(
    engine: Engine, s: EngineSettings, idle_minutes: float, state_file: str | None = None
) -> int:
    """Start the engine, then watch it: exit when it dies, on SIGTERM, or after `idle_minutes`
    without a token processed. Removes the state file on every one of these exits."""
    stopping: list[str] = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append("SIGTERM"))
    signal.signal(signal.SIGINT, lambda *_: stopping.append("SIGINT"))
    code = 0
    try:
        engine.start(s)
        print(
            f"course_runtime.server_process: {type(engine).__name__} serving {s.alias} on {s.host}:{s.port} "
            f"with {s.slots} slots of {s.ctx_per_slot} tokens, {s.threads} threads.",
            flush=True,
        )
        limit, seen, last = idle_minutes * 60, None, time.monotonic()
        while not stopping:
            _nap(min(2.0, max(limit / 4, 0.05)), stopping)
            if stopping:
                break
            if not engine.alive():
                print("course_runtime.server_process: the engine stopped on its own.", flush=True)
                code = EXIT_ENGINE_DIED
                break
            now = activity(s.port, s.key)
            if now is not None and (now[1] or now[0] != seen):
                seen, last = now[0], time.monotonic()
            elif time.monotonic() - last > limit:
                print(
                    f"course_runtime.server_process: idle for {idle_minutes:g} min, stopping.",
                    flush=True,
                )
                break
    except SystemExit as err:
        code = err.code if isinstance(err.code, int) else 1
    finally:
        engine.stop()
        forget(state_file)
    return code


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line `course_runtime.manager.launch` passes."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--alias", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument(
        "--host", default="127.0.0.1", help="0.0.0.0 to serve a classroom (with its own key)"
    )
    p.add_argument("--engine", choices=ENGINES, default="xllamacpp")
    p.add_argument("--binary", default=None, help="the llama-server binary (engine llama-server)")
    p.add_argument("--slots", type=int, default=4)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    p.add_argument("--no-speculative", action="store_true")
    p.add_argument(
        "--cache-prompt",
        action="store_true",
        help="reuse cached prefixes (faster, not reproducible)",
    )
    p.add_argument("--idle-minutes", type=float, default=30.0)
    p.add_argument(
        "--state-file", default=None, help="the manager's record of this server, removed on exit"
    )
    return p.parse_args(argv)


def settings_from(args: argparse.Namespace) -> EngineSettings:
    """Engine settings from the command line and the key from the environment."""
    key = os.environ.get(KEY_ENV)
    if not key:
        raise SystemExit(
            f"course_runtime.server_process: set {KEY_ENV}; the server never runs without a key."
        )
    return EngineSettings(
        args.model,
        args.alias,
        args.port,
        key,
        host=args.host,
        slots=args.slots,
        threads=args.threads,
        speculative=not args.no_speculative,
        cache_prompt=args.cache_prompt,
    )


def main(argv: list[str] | None = None) -> None:
    """Start the shared local server (`python -m course_runtime.server_process`)."""
    args = parse(argv)
    engine = (
        XllamacppEngine() if args.engine == "xllamacpp" else LlamaServerEngine(args.binary or "")
    )
    code = supervise(engine, settings_from(args), args.idle_minutes, args.state_file)
    sys.stdout.flush()
    os._exit(code)  # llama.cpp's server threads live in this process: leave without joining them


if __name__ == "__main__":
    main()
