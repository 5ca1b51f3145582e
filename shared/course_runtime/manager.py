"""One shared local llama.cpp server per user, found through a small state file.

`ensure_server()` returns a healthy server, starting one if needed. Every notebook of a user
shares it: the state file (port, pid, model, key) lives in the user state folder, readable by
the user only, guarded by a file lock so two kernels starting at once do not start two servers.
A dead or foreign server is replaced. `python -m course_runtime.manager stop` (`make stop-model`)
stops it; the server also stops itself after an idle period (see `course_runtime.server_process`).

The server binds 127.0.0.1 and refuses any request without the random per-user key kept in
the state file, so a web page open in the learner's browser cannot drive the model.

Engines (COURSE_ENGINE): `auto` (default) starts the prebuilt xllamacpp engine and, if it
crashes at start or fails its first request, says so and falls back to llama.cpp's
`llama-server` binary, built once into the cache folder (`course_runtime.fallback_build`);
`xllamacpp` or `llama-server` choose one with no fallback.

Only a process that is provably the course's server is ever signalled: the state file
records the pid together with that process's start time and command line, and both must
still match. A pid that now belongs to something else (after a reboot, or a long idle
period) is left alone and the stale record is dropped. The server removes the state file
itself on every clean exit, the idle exit included.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import httpx
from filelock import FileLock

from reflect.model.config import Settings, state_dir

from .fallback_build import BuildError, build, find_binary
from .model_file import model_label, model_path
from .server_process import EXIT_ENGINE_MISSING, EXIT_MODEL, KEY_ENV

START_TIMEOUT_S = 180.0
LOG_LIMIT = 20 * 1024 * 1024
SLOTS = 4  # parallel requests: notebooks running at once, or COURSE_WORKERS > 1 (docs/models.md, "The local engine")
SERVE_COMMAND = [
    sys.executable,
    "-m",
    "course_runtime.server_process",
]  # tests swap in a model-free server


class ServerError(RuntimeError):
    """The local server could not be started or reached; the message says what to do."""


@dataclass
class ServerState:
    """What the state file records about the running server."""

    port: int
    pid: int
    model_path: str
    alias: str
    log: str
    started_at: float
    identity: str  # the process's start time and command line: see process_identity()
    key: str = ""  # the API key the server requires (the file is readable by the user only)
    engine: str = "xllamacpp"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL of this server."""
        return f"http://127.0.0.1:{self.port}/v1"


def _state_file() -> Path:
    return state_dir() / "server.json"


def read_state() -> ServerState | None:
    """The recorded server, or None: no file, a file from another version, or one we cannot read."""
    path = _state_file()
    try:
        return ServerState(**json.loads(path.read_text()))
    except FileNotFoundError:
        return None
    except OSError as err:
        print(
            f"[reflect] The server state file {path} cannot be read ({type(err).__name__}: {err}); "
            "treating it as no server. Remove it, or set COURSE_STATE_DIR to a folder of your own.",
            file=sys.stderr,
        )
        return None
    except (ValueError, TypeError):
        return None  # corrupt, or written by an older version of the course: not a server we know


def _write_state(state: ServerState) -> None:
    path = _state_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # it holds the server's key
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(asdict(state), indent=1))
        os.replace(tmp, path)
    except OSError as err:
        stop_pid(state.pid)  # ours, just started: do not leave it running unrecorded
        raise ServerError(
            f"Cannot write the server state file {path} ({type(err).__name__}: {err}). "
            "Remove it, or set COURSE_STATE_DIR to a folder of your own."
        ) from err


def process_identity(pid: int) -> str | None:
    """The start time and command line of process `pid`, or None if there is no such process.

    A pid alone is not an identity: after a reboot or a long idle period the same number can
    belong to any process of yours. Start time plus command line can not be reused by chance.
    """
    proc = Path(f"/proc/{pid}")
    if Path("/proc/self/stat").exists():
        try:
            stat = (proc / "stat").read_text()
            cmdline = (
                (proc / "cmdline")
                .read_bytes()
                .replace(b"\0", b" ")
                .decode(errors="replace")
                .strip()
            )
        except OSError:
            return None
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "; comm may hold spaces
        if fields[0] == "Z":
            return None  # a zombie is not a running server
        return f"{fields[19]} {cmdline}"  # field 22 of stat: start time in clock ticks since boot
    try:  # macOS and other systems without /proc
        out = subprocess.run(
            ["ps", "-o", "lstart=,command=", "-p", str(pid)],
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def is_ours(state: ServerState) -> bool:
    """True only if the recorded pid is still the very process the course started."""
    return process_identity(state.pid) == state.identity


def pid_alive(pid: int) -> bool:
    """True if a process with this pid exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0); look at its state where /proc exists.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


def health(state: ServerState, timeout: float = 2.0) -> bool:
    """True if our server answers on the recorded port: ready, it accepts our key, same model."""
    url, auth = f"http://127.0.0.1:{state.port}", {"Authorization": f"Bearer {state.key}"}
    try:
        if httpx.get(f"{url}/health", timeout=timeout).status_code != 200:
            return False  # 503 while the model loads
        r = httpx.get(f"{url}/props", headers=auth, timeout=timeout)
        return r.status_code == 200 and r.json().get("model_path") == state.model_path
    except (httpx.HTTPError, ValueError, AttributeError):
        return False


def first_request(state: ServerState, timeout: float = 60.0) -> str | None:
    """Ask the new server for one token; None if it answered, else what went wrong."""
    body = {"messages": [{"role": "user", "content": "Say OK."}], "max_tokens": 1, "temperature": 0}
    try:
        r = httpx.post(
            f"http://127.0.0.1:{state.port}/v1/chat/completions",
            json=body,
            timeout=timeout,
            headers={"Authorization": f"Bearer {state.key}"},
        )
        if r.status_code != 200:
            return f"HTTP {r.status_code}: {r.text[:200]}"
        r.json()["choices"][0]["message"]
    except (httpx.HTTPError, ValueError, KeyError, IndexError, TypeError) as err:
        return f"{type(err).__name__}: {err}"
    return None


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port: int) -> bool:
    """True if something listens on 127.0.0.1:port."""
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def _log_tail(path: str, lines: int = 15) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def start_server(settings: Settings, model: Path) -> ServerState:
    """Start a server for the model on the configured engine, falling back from xllamacpp to
    llama-server (COURSE_ENGINE=auto) when the first crashes or fails its first request."""
    port = settings.local_port or free_port()
    if settings.local_port and port_in_use(port):
        raise ServerError(
            f"Port {port} (COURSE_LOCAL_PORT) is already in use on 127.0.0.1. "
            "Set COURSE_LOCAL_PORT=0 to pick a free port, or stop what listens there."
        )
    log = state_dir() / "server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    if log.exists() and log.stat().st_size > LOG_LIMIT:
        log.replace(log.with_suffix(".log.1"))  # keep one old log, never an ever-growing file
    extra = [
        "--idle-minutes",
        str(settings.idle_minutes),
        "--state-file",
        str(_state_file()),
        "--slots",
        str(max(SLOTS, settings.workers)),
    ]
    engine = "llama-server" if settings.engine == "llama-server" else "xllamacpp"
    try:
        state = launch(model, port, log, extra, engine=engine)
    except EngineFailed as err:
        if settings.engine != "auto":
            raise ServerError(str(err)) from None
        print(
            f"[reflect] {err}\n[reflect] Falling back to llama.cpp's llama-server binary "
            "(COURSE_ENGINE=llama-server chooses it directly).",
            file=sys.stderr,
            flush=True,
        )
        state = launch(model, port, log, extra, engine="llama-server")
    _write_state(state)
    return state


class EngineFailed(ServerError):
    """The engine crashed at start or failed its first request (not: a bad model file)."""


def llama_server_binary() -> Path:
    """The llama-server binary: COURSE_LLAMA_SERVER, the built one, or build it now (once)."""
    binary = find_binary()
    if binary is None:
        try:
            binary = build(say=lambda line: print(line, file=sys.stderr, flush=True))
        except BuildError as err:
            raise ServerError(f"The fallback engine is not available: {err}") from None
    return binary


def launch(
    model: Path,
    port: int,
    log: Path,
    extra: list[str] | tuple[str, ...] = (),
    engine: str = "xllamacpp",
    key: str | None = None,
) -> ServerState:
    """Start a server process for `model` on `port`, wait until it is healthy and has answered a
    first request; EngineFailed (a crash, a failed first request) or ServerError (the model, a
    timeout), with the log's last lines. Not recorded in the state file: `start_server` does that
    for the shared server; a benchmark's private server is its own to stop (`stop_pid`)."""
    key = key or secrets.token_urlsafe(24)
    cmd = [
        *SERVE_COMMAND,
        "--model",
        str(model),
        "--alias",
        model_label(model),
        "--port",
        str(port),
        "--engine",
        engine,
        *extra,
    ]
    if engine == "llama-server":
        cmd += ["--binary", str(llama_server_binary())]
    with open(log, "ab") as fh:
        proc = subprocess.Popen(  # own session: the server outlives the kernel that started it
            cmd,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, KEY_ENV: key},
        )
    identity = process_identity(proc.pid) or ""
    state = ServerState(
        port, proc.pid, str(model), model_label(model), str(log), time.time(), identity, key, engine
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise _start_failure(proc.returncode, engine, log)
        if health(state, timeout=1.0):
            problem = first_request(state)
            if problem is None:
                # its identity once it answers: read right after the start, the command line can
                # still be empty (mid-exec), and a later check would take the server for another process
                return replace(state, identity=process_identity(proc.pid) or identity)
            stop_pid(proc.pid)
            raise EngineFailed(
                f"The {engine} engine started but failed its first request ({problem}). "
                f"Last log lines ({log}):\n{_log_tail(str(log))}"
            )
        time.sleep(0.25)
    stop_pid(proc.pid)
    raise ServerError(
        f"The local model server did not answer within {START_TIMEOUT_S:.0f} s. See {log}."
    )


def _start_failure(code: int, engine: str, log: Path) -> ServerError:
    tail = f"Last log lines ({log}):\n{_log_tail(str(log))}"
    if code == EXIT_MODEL:
        return ServerError(
            f"The local model server could not load the model file. {tail}\n"
            "Check the model file: `make model` assembles and verifies it again."
        )
    if code == EXIT_ENGINE_MISSING:
        return EngineFailed(f"The {engine} engine is not installed. {tail}")
    how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
    return EngineFailed(f"The {engine} engine {how} at start. {tail}")


def ensure_server(settings: Settings | None = None) -> ServerState:
    """Return a healthy shared server for the configured model, starting one if needed."""
    settings = settings or Settings.from_env()
    model = model_path(settings)
    lock = state_dir() / "server.lock"
    try:
        state_dir().mkdir(parents=True, exist_ok=True)
        guard = FileLock(str(lock), timeout=START_TIMEOUT_S + 30)
        guard.acquire()
    except OSError as err:
        raise ServerError(
            f"Cannot use the course state folder {state_dir()} ({type(err).__name__}: {err}). "
            "Set COURSE_STATE_DIR to a folder of your own."
        ) from err
    try:
        state = read_state()
        if state and is_ours(state):
            if health(state) and state.model_path == str(model):
                return state
            stop_pid(state.pid)  # ours, but another model was asked for, or it stopped answering
        return start_server(settings, model)
    finally:
        guard.release()


def stop_pid(pid: int, grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds. Callers check is_ours() first."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return
        time.sleep(0.1)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def stop_server() -> str:
    """Stop the recorded server if it is still the course's own process; say what happened."""
    state = read_state()
    if state is None:
        return "No local model server is recorded."
    if is_ours(state):
        stop_pid(state.pid)
        msg = f"Stopped the local model server (pid {state.pid}, port {state.port})."
    else:
        msg = "The recorded local model server was not running (its stale record is removed; no process was signalled)."
    _state_file().unlink(missing_ok=True)
    return msg


def main(argv: list[str] | None = None) -> None:
    """`python -m course_runtime.manager start|stop|status`."""
    args = argv if argv is not None else sys.argv[1:]
    cmd = args[0] if args else "status"
    if cmd == "stop":
        print(stop_server())
    elif cmd == "start":
        s = ensure_server()
        print(f"Local model server: {s.base_url} (pid {s.pid}, model {s.alias})")
    elif cmd == "status":
        s = read_state()
        up = bool(s and is_ours(s) and health(s))
        print(
            f"Local model server: {f'running at {s.base_url} ({s.engine})' if up else 'not running'}"
        )
    else:
        raise SystemExit("usage: python -m course_runtime.manager [start|stop|status]")


if __name__ == "__main__":
    main()
