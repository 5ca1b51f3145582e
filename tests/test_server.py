"""The shared local server manager, with a model-free server (tests/fake_serve.py)."""

import socket
import sys
import time
from pathlib import Path

import pytest

from reflect import connect, server
from reflect.config import Settings

pytest.importorskip("fastapi")
FAKE = [sys.executable, str(Path(__file__).with_name("fake_serve.py"))]


@pytest.fixture
def gguf(course_env, monkeypatch):
    monkeypatch.setattr(server, "SERVE_COMMAND", FAKE)
    path = course_env / "tiny.gguf"
    path.write_bytes(b"GGUF" + b"\0" * 16)
    monkeypatch.setenv("COURSE_MODEL_PATH", str(path))
    yield path
    server.stop_server()


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


def test_idle_server_stops_itself(gguf, monkeypatch):
    monkeypatch.setenv("COURSE_LOCAL_IDLE_MINUTES", "0.01")  # 0.6 s
    s = server.ensure_server()
    deadline = time.monotonic() + 15
    while server.pid_alive(s.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not server.pid_alive(s.pid)
    assert "idle for 0.01 min, stopping" in Path(s.log).read_text()


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
    with pytest.raises(server.ServerError, match="(?s)exited at start.*cannot load model"):
        server.ensure_server()


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
