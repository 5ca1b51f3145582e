"""One shared local llama.cpp server per user, found through a small state file.

`ensure_server()` returns the base URL of a healthy server, starting one if needed. Every
notebook of a user shares it: the state file (port, pid, model) lives in the user state
folder, guarded by a file lock so two kernels starting at once do not start two servers.
A dead or foreign server is replaced. `python -m reflect.model.server stop` (`make stop-model`)
stops it; the server also stops itself after an idle period (see `reflect.model.serve`).

Only a process that is provably the course's server is ever signalled: the state file
records the pid together with that process's start time and command line, and both must
still match. A pid that now belongs to something else (after a reboot, or a long idle
period) is left alone and the stale record is dropped. The server removes the state file
itself on every clean exit, the idle exit included.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx
from filelock import FileLock

from .config import Settings, state_dir
from .localmodel import model_label, model_path

START_TIMEOUT_S = 180.0
LOG_LIMIT = 20 * 1024 * 1024
SERVE_COMMAND = [sys.executable, "-m", "reflect.model.serve"]  # tests swap in a model-free server


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
        print(f"[reflect] The server state file {path} cannot be read ({type(err).__name__}: {err}); "
              "treating it as no server. Remove it, or set COURSE_STATE_DIR to a folder of your own.",
              file=sys.stderr)
        return None
    except (ValueError, TypeError):
        return None  # corrupt, or written by an older version of the course: not a server we know


def _write_state(state: ServerState) -> None:
    path = _state_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(state), indent=1))
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
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            return None
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "; comm may hold spaces
        if fields[0] == "Z":
            return None  # a zombie is not a running server
        return f"{fields[19]} {cmdline}"  # field 22 of stat: start time in clock ticks since boot
    try:  # macOS and other systems without /proc
        out = subprocess.run(["ps", "-o", "lstart=,command=", "-p", str(pid)], capture_output=True,
                             text=True, timeout=5)
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
    """True if our server (same pid, same model) answers on the recorded port."""
    try:
        r = httpx.get(f"http://127.0.0.1:{state.port}/course/health", timeout=timeout)
        info = r.json()
    except (httpx.HTTPError, ValueError):
        return False
    return r.status_code == 200 and info.get("pid") == state.pid and info.get("model_path") == state.model_path


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
    """Start a server for the model and wait until it is healthy; ServerError with its log otherwise."""
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
    state = launch(model, port, log, ["--idle-minutes", str(settings.idle_minutes), "--state-file", str(_state_file())])
    _write_state(state)
    return state


def launch(model: Path, port: int, log: Path, extra: list[str] | tuple[str, ...] = ()) -> ServerState:
    """Start a server process for `model` on `port` and wait until it is healthy; ServerError with
    the log's last lines otherwise. Not recorded in the state file: `start_server` does that for
    the shared server; a benchmark's private server is its own to stop (`stop_pid`)."""
    cmd = [*SERVE_COMMAND, "--model", str(model), "--alias", model_label(model), "--port", str(port), *extra]
    with open(log, "ab") as fh:
        proc = subprocess.Popen(  # own session: the server outlives the kernel that started it
            cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    identity = process_identity(proc.pid) or ""
    state = ServerState(port, proc.pid, str(model), model_label(model), str(log), time.time(), identity)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(
                f"The local model server exited at start (code {proc.returncode}). Last log lines "
                f"({log}):\n{_log_tail(str(log))}\nCheck the model file (`make model`) and that "
                'llama-cpp-python is installed (`pip install -e ".[local]"`).'
            )
        if health(state, timeout=1.0):
            return state
        time.sleep(0.25)
    stop_pid(proc.pid)
    raise ServerError(f"The local model server did not answer within {START_TIMEOUT_S:.0f} s. See {log}.")


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
    """`python -m reflect.model.server start|stop|status`."""
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
        print(f"Local model server: {'running at ' + s.base_url if up else 'not running'}")
    else:
        raise SystemExit("usage: python -m reflect.model.server [start|stop|status]")


if __name__ == "__main__":
    main()
