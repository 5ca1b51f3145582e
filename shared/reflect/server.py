"""One shared local llama.cpp server per user, found through a small state file.

`ensure_server()` returns the base URL of a healthy server, starting one if needed. Every
notebook of a user shares it: the state file (port, pid, model) lives in the user state
folder, guarded by a file lock so two kernels starting at once do not start two servers.
A dead or foreign server is replaced. `python -m reflect.server stop` (`make stop-model`)
stops it; the server also stops itself after an idle period (see `reflect.serve`).
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
SERVE_COMMAND = [sys.executable, "-m", "reflect.serve"]  # tests swap in a model-free server


class ServerError(RuntimeError):
    """The local server could not be started or reached; the message says what to do."""


@dataclass
class ServerState:
    port: int
    pid: int
    model_path: str
    alias: str
    log: str
    started_at: float

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def _state_file() -> Path:
    return state_dir() / "server.json"


def read_state() -> ServerState | None:
    try:
        return ServerState(**json.loads(_state_file().read_text()))
    except (OSError, ValueError, TypeError):
        return None


def _write_state(state: ServerState) -> None:
    _state_file().parent.mkdir(parents=True, exist_ok=True)
    tmp = _state_file().with_suffix(".tmp")
    tmp.write_text(json.dumps(asdict(state), indent=1))
    os.replace(tmp, _state_file())


def pid_alive(pid: int) -> bool:
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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_in_use(port: int) -> bool:
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
    cmd = [
        *SERVE_COMMAND, "--model", str(model), "--alias", model_label(model),
        "--port", str(port), "--idle-minutes", str(settings.idle_minutes),
    ]
    with open(log, "ab") as fh:
        proc = subprocess.Popen(  # own session: the server outlives the kernel that started it
            cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    state = ServerState(port, proc.pid, str(model), model_label(model), str(log), time.time())
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(
                f"The local model server exited at start (code {proc.returncode}). Last log lines "
                f"({log}):\n{_log_tail(str(log))}\nCheck the model file (`make model`) and that "
                'llama-cpp-python is installed (`pip install -e ".[local]"`).'
            )
        if health(state, timeout=1.0):
            _write_state(state)
            return state
        time.sleep(0.25)
    stop_pid(proc.pid)
    raise ServerError(f"The local model server did not answer within {START_TIMEOUT_S:.0f} s. See {log}.")


def ensure_server(settings: Settings | None = None) -> ServerState:
    """Return a healthy shared server for the configured model, starting one if needed."""
    settings = settings or Settings.from_env()
    model = model_path(settings)
    state_dir().mkdir(parents=True, exist_ok=True)
    with FileLock(str(state_dir() / "server.lock"), timeout=START_TIMEOUT_S + 30):
        state = read_state()
        if state and pid_alive(state.pid) and health(state):
            if state.model_path == str(model):
                return state
            stop_pid(state.pid)  # another model was asked for: replace the server
        elif state and pid_alive(state.pid):
            stop_pid(state.pid)  # alive but not answering as ours: do not leave it eating the CPU
        return start_server(settings, model)


def stop_pid(pid: int, grace: float = 10.0) -> None:
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
    state = read_state()
    if state is None:
        return "No local model server is recorded."
    if pid_alive(state.pid) and health(state):
        stop_pid(state.pid)
        msg = f"Stopped the local model server (pid {state.pid}, port {state.port})."
    else:
        msg = "The recorded local model server was not running."
    _state_file().unlink(missing_ok=True)
    return msg


def main(argv: list[str] | None = None) -> None:
    args = argv if argv is not None else sys.argv[1:]
    cmd = args[0] if args else "status"
    if cmd == "stop":
        print(stop_server())
    elif cmd == "start":
        s = ensure_server()
        print(f"Local model server: {s.base_url} (pid {s.pid}, model {s.alias})")
    elif cmd == "status":
        s = read_state()
        up = bool(s and pid_alive(s.pid) and health(s))
        print(f"Local model server: {'running at ' + s.base_url if up else 'not running'}")
    else:
        raise SystemExit("usage: python -m reflect.server [start|stop|status]")


if __name__ == "__main__":
    main()
