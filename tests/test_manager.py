"""The shared local server manager, with a model-free server (tests/fake_server_process.py)."""

import dataclasses
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from pathlib import Path

import httpx
import pytest

from course_runtime import connect
from course_runtime import manager as server
from reflect.model.config import Settings
from tests.conftest import cmdline

FAKE = [sys.executable, str(Path(__file__).with_name("fake_server_process.py"))]


@pytest.fixture
def gguf(course_env, monkeypatch, request):
    monkeypatch.setattr(server, "SERVE_COMMAND", FAKE)
    monkeypatch.setenv("COURSE_LLAMA_SERVER", "/bin/true")  # the fake engine never runs it
    launched = []
    real_launch = server.launch

    def recording_launch(*args, **kwargs):
        launched.append(real_launch(*args, **kwargs))
        return launched[-1]

    monkeypatch.setattr(server, "launch", recording_launch)
    path = course_env / "tiny.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 16)
    monkeypatch.setenv("COURSE_MODEL_PATH", str(path))
    yield path
    server.stop_server()
    for state in launched:  # a server this test started that is still running: stop it, and say so
        if server.is_ours(state):
            server.stop_pid(state.pid)
            warnings.warn(
                f"{request.node.name} left fake server pid {state.pid} running", stacklevel=1
            )


def test_start_reuse_and_stop(gguf, capsys):
    s1 = server.ensure_server()
    assert server.health(s1) and server.read_state() == s1
    s2 = server.ensure_server()
    assert s2.pid == s1.pid, "a second notebook must share the running server"
    conn = connect(quiet=True)
    assert conn.chat([{"role": "user", "content": "echo me"}]).text == "echo me"
    assert conn.model == "tiny" and conn.base_url == s1.base_url
    assert "Stopped the local model server" in server.stop_server()
    assert not server.pid_alive(s1.pid) and server.read_state() is None


def test_dead_server_is_restarted(gguf):
    s1 = server.ensure_server()
    server.stop_pid(s1.pid)
    s2 = server.ensure_server()
    assert s2.pid != s1.pid and server.health(s2)


def test_client_reconnects_after_the_server_stopped(gguf):
    conn = connect(quiet=True)
    old = server.read_state()
    server.stop_pid(old.pid)
    assert conn.chat([{"role": "user", "content": "still here"}]).text == "still here"
    assert server.read_state().pid != old.pid


def test_other_model_replaces_the_server(gguf, course_env, monkeypatch):
    s1 = server.ensure_server()
    other = course_env / "other.gguf"
    other.write_bytes(b"GGUF")
    monkeypatch.setenv("COURSE_MODEL_PATH", str(other))
    s2 = server.ensure_server()
    assert s2.model_path == str(other) and not server.pid_alive(s1.pid)


def test_idle_server_stops_itself_and_leaves_no_state_file(gguf, monkeypatch):
    monkeypatch.setenv("COURSE_LOCAL_IDLE_MINUTES", "0.01")  # 0.6 s
    s = server.ensure_server()
    assert server._state_file().exists()
    deadline = time.monotonic() + 15
    while server.pid_alive(s.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not server.pid_alive(s.pid)
    assert "idle for 0.01 min, stopping" in Path(s.log).read_text()
    assert not server._state_file().exists(), (
        "an idle exit left a record naming a pid that can be reused"
    )


def test_sigterm_exit_leaves_no_state_file(gguf):
    s = server.ensure_server()
    os.kill(s.pid, signal.SIGTERM)
    deadline = time.monotonic() + 15
    while server.pid_alive(s.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not server._state_file().exists()


@pytest.fixture
def stranger():
    """An unrelated live process of the user's (think: an editor, a database), running its own program: until
    the child has exec'd, /proc shows the parent's command line (a race seen once on Python 3.13)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; print('up', flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline() == "up\n"
    yield proc
    proc.kill()
    proc.wait()


def _stale_record(pid: int, port: int, identity: str, model: str) -> None:
    state = server.ServerState(port, pid, model, "tiny", "/nonexistent.log", 0.0, identity)
    server._write_state(state)


def test_a_stale_record_naming_an_unrelated_process_never_gets_it_killed(gguf, stranger):
    # the record names the stranger's pid, as after a reboot: same number, another process
    _stale_record(
        stranger.pid, 9, "12345 python -m course_runtime.server_process --model x", str(gguf)
    )
    s = server.ensure_server()
    assert s.pid != stranger.pid and server.health(s)
    time.sleep(0.3)
    assert stranger.poll() is None, (
        "ensure_server signalled a process that is not the course's server"
    )


def test_a_record_with_the_strangers_own_identity_but_no_health_is_not_enough_for_stop(
    gguf, stranger
):
    # even a matching pid is not ours when the start time and command line differ
    _stale_record(
        stranger.pid, 9, server.process_identity(stranger.pid).replace("sleep", "sleeq"), str(gguf)
    )
    assert "no process was signalled" in server.stop_server()
    time.sleep(0.3)
    assert stranger.poll() is None and server.read_state() is None


def test_an_unreadable_state_file_is_no_server_with_a_clear_message(gguf, capsys):
    server._state_file().parent.mkdir(parents=True, exist_ok=True)
    server._state_file().mkdir()  # reading a folder fails like a file of another user's would
    assert server.read_state() is None
    assert "cannot be read" in capsys.readouterr().err
    before = _fake_servers(str(gguf))
    with pytest.raises(
        server.ServerError, match="Cannot write the server state file.*COURSE_STATE_DIR"
    ):
        server.ensure_server()
    assert _fake_servers(str(gguf)) - before == set(), (
        "the server started for this attempt was left running unrecorded"
    )


def test_a_permission_error_reading_the_state_file_is_no_server(gguf, monkeypatch, capsys):
    def denied(self, *a, **k):
        raise PermissionError(13, "Permission denied", str(self))

    _stale_record(os.getpid(), 9, "x", str(gguf))
    monkeypatch.setattr(Path, "read_text", denied)
    assert server.read_state() is None
    assert "PermissionError" in capsys.readouterr().err


def _fake_servers(model: str = "") -> set[int]:
    """Live (not zombie) fake-server processes on this machine, serving `model` when given (so a test
    running beside this one in another worker is not counted)."""
    return {
        int(p)
        for p in os.listdir("/proc")
        if p.isdigit()
        and "fake_server_process" in cmdline(p)
        and model in cmdline(p)
        and server.pid_alive(int(p))
    }


def test_port_in_use_is_a_clear_error(gguf, monkeypatch):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        monkeypatch.setenv("COURSE_LOCAL_PORT", str(busy.getsockname()[1]))
        with pytest.raises(server.ServerError, match="already in use.*COURSE_LOCAL_PORT=0"):
            server.ensure_server()


def test_server_that_fails_to_start_shows_its_log(gguf, course_env, monkeypatch):
    bad = course_env / "crash.gguf"
    bad.write_bytes(b"GGUF")
    monkeypatch.setenv("COURSE_MODEL_PATH", str(bad))
    with pytest.raises(
        server.ServerError, match="(?s)could not load the model file.*cannot load model.*make model"
    ):
        server.ensure_server()
    assert server.read_state() is None


def _fail_xllamacpp(course_env, monkeypatch, how):
    model = course_env / f"{how}.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setenv("COURSE_MODEL_PATH", str(model))


@pytest.mark.parametrize(
    "how, said",
    [("segv", "killed by signal 11 at start"), ("badfirst", "failed its first request (HTTP 500")],
)
def test_a_failing_engine_falls_back_to_llama_server_and_says_so(
    gguf, course_env, monkeypatch, capsys, how, said
):
    _fail_xllamacpp(course_env, monkeypatch, how)
    s = server.ensure_server()
    err = capsys.readouterr().err
    assert said in err and "Falling back to llama.cpp's llama-server" in err
    assert s.engine == "llama-server" and server.read_state() == s and server.health(s)
    conn = connect(quiet=True)
    assert conn.chat([{"role": "user", "content": "served"}]).text == "served"


def test_a_chosen_engine_does_not_fall_back(gguf, course_env, monkeypatch):
    _fail_xllamacpp(course_env, monkeypatch, "segv")
    monkeypatch.setenv("COURSE_ENGINE", "xllamacpp")
    with pytest.raises(server.ServerError, match="killed by signal 11") as info:
        server.ensure_server()
    assert "Falling back" not in str(info.value) and server.read_state() is None


def test_fallback_without_a_way_to_build_llama_server_is_one_clear_error(
    gguf, course_env, monkeypatch
):
    _fail_xllamacpp(course_env, monkeypatch, "segv")
    monkeypatch.delenv("COURSE_LLAMA_SERVER")
    monkeypatch.setattr(server, "find_binary", lambda: None)
    monkeypatch.setattr(
        "course_runtime.fallback_build._tool", lambda *names: None
    )  # no cmake, no compiler
    with pytest.raises(server.ServerError, match="fallback engine is not available.*needs cmake"):
        server.ensure_server()


def test_the_server_refuses_requests_without_its_key(gguf):
    s = server.ensure_server()
    chat = f"http://127.0.0.1:{s.port}/v1/chat/completions"
    body = {"messages": [{"role": "user", "content": "hi"}]}
    assert httpx.post(chat, json=body).status_code == 401
    assert httpx.post(chat, json=body, headers={"Authorization": "Bearer guess"}).status_code == 401
    assert (
        httpx.post(chat, json=body, headers={"Authorization": f"Bearer {s.key}"}).status_code == 200
    )
    assert len(s.key) >= 32 and s.key != server.ensure_server.__name__


def test_the_state_file_holding_the_key_is_readable_by_the_user_only(gguf):
    s = server.ensure_server()
    assert s.key in server._state_file().read_text()
    assert server._state_file().stat().st_mode & 0o077 == 0
    assert server.ensure_server().key == s.key  # a second notebook gets the same key from the file


def test_status_command(gguf, capsys):
    server.main(["status"])
    assert "not running" in capsys.readouterr().out
    s = server.ensure_server()
    server.main(["status"])
    assert s.base_url in capsys.readouterr().out


def test_settings_port_default_is_free():
    assert Settings.from_env({}).local_port == 0


def test_big_log_is_rotated_at_start(gguf, course_env, monkeypatch):
    monkeypatch.setattr(server, "LOG_LIMIT", 100)
    log = course_env / "state" / "server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("x" * 1000)
    server.ensure_server()
    assert (course_env / "state" / "server.log.1").stat().st_size == 1000
    assert log.stat().st_size < 1000


def test_two_processes_with_the_same_command_line_have_different_identities():
    cmd = [sys.executable, "-c", "import time; time.sleep(30)"]
    first = subprocess.Popen(cmd)
    time.sleep(0.1)  # start times are counted in clock ticks (10 ms)
    second = subprocess.Popen(cmd)
    try:
        a, b = server.process_identity(first.pid), server.process_identity(second.pid)
        assert a and b and a != b, "a reused pid running the same command would pass for our server"
    finally:
        for p in (first, second):
            p.kill()
            p.wait()
    assert server.process_identity(first.pid) is None


def test_health_is_false_when_the_port_serves_another_model(gguf, course_env):
    s = server.ensure_server()
    other = dataclasses.replace(s, model_path=str(course_env / "other.gguf"))
    assert server.health(s) and not server.health(other)
    assert not server.health(dataclasses.replace(s, key="not-the-key"))


def test_a_server_in_use_does_not_stop_for_idleness(gguf, monkeypatch):
    monkeypatch.setenv("COURSE_LOCAL_IDLE_MINUTES", "0.02")  # 1.2 s
    conn = connect(quiet=True)
    s = server.read_state()
    for _ in range(12):  # 3.6 s of steady use, three idle periods long
        conn.chat([{"role": "user", "content": "busy"}])
        time.sleep(0.3)
    assert server.pid_alive(s.pid) and server.read_state() == s
    deadline = time.monotonic() + 15
    while server.pid_alive(s.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not server.pid_alive(s.pid), "once unused, it stops"


def test_a_server_caught_mid_exec_is_still_recognised_as_ours(gguf, monkeypatch):
    real, calls = server.process_identity, []

    def early_then_real(pid):  # the first look, right after the start, sees no command line yet
        calls.append(pid)
        ident = real(pid)
        return ident.split(" ", 1)[0] + " " if len(calls) == 1 and ident else ident

    monkeypatch.setattr(server, "process_identity", early_then_real)
    s1 = server.ensure_server()
    assert server.is_ours(s1), "the recorded identity is the one the server has once it answers"
    assert server.ensure_server().pid == s1.pid
