"""One stated budget per chat call: a slow server and a server that is down, told apart.

A stub HTTP server on 127.0.0.1 either stalls (reads the request, never answers) or closes
every connection at once. Bounded: every stub stops by itself when its test ends.
"""

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from course_runtime import client as llm
from course_runtime import connect
from reflect import ModelError
from tests.conftest import settings_for

MSG = [{"role": "user", "content": "hi"}]


class Stub:
    """A TCP server on 127.0.0.1 that stalls or closes every connection; counts connections."""

    def __init__(self, mode: str):
        self.mode, self.connections = mode, 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.open: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            if self.mode == "close":
                conn.close()
            else:  # stall: read the request, never answer
                conn.settimeout(0.2)
                try:
                    conn.recv(65536)
                except OSError:
                    pass
                self.open.append(conn)

    def close(self):
        self.stop.set()
        self.thread.join(5)
        for c in self.open:
            c.close()
        self.sock.close()


@pytest.fixture
def stub():
    made = []

    def make(mode):
        made.append(Stub(mode))
        return made[-1]

    yield make
    for s in made:
        s.close()


def _conn(port: int, budget: float, backend: str = "openai"):
    s = settings_for(
        "openai",
        OPENAI_API_KEY="k",
        OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1",
        COURSE_TIMEOUT_S=str(budget),
    )
    conn = connect(settings=s, quiet=True)
    restarts = []
    if backend == "local":  # the local backend's behaviour, without starting a model server
        conn.backend = conn.live_backend = "local"

        def restart():
            restarts.append(time.monotonic())
            if len(restarts) > 2:  # a loop that restarts on every failure would never end
                raise RuntimeError("restarted again and again")

        conn._reconnect_local = restart
    return conn, restarts


@pytest.mark.parametrize("backend", ["openai", "local"])
def test_a_slow_server_gets_one_clear_error_within_the_budget_and_no_restart(stub, backend):
    server = stub("stall")
    conn, restarts = _conn(server.port, 1.5, backend)
    t = time.monotonic()
    with pytest.raises(
        ModelError, match=r"did not answer within [12] s .*COURSE_TIMEOUT_S=1.5.*slow, not down"
    ):
        conn.chat(MSG)
    took = time.monotonic() - t
    assert 1.4 <= took < 2.5, f"waited {took:.1f} s for a 1.5 s budget"
    assert server.connections == 1, "a slow request was sent again"
    assert restarts == []


def test_a_local_server_that_is_down_is_restarted_once_then_the_error_is_clear(stub, monkeypatch):
    monkeypatch.setattr(llm, "BACKOFF_S", (0.05, 0.05))
    server = stub("close")
    conn, restarts = _conn(server.port, 5, "local")
    t = time.monotonic()
    with pytest.raises(ModelError, match="could not connect"):
        conn.chat(MSG)
    assert len(restarts) == 1
    assert server.connections == 1 + 1 + llm.MAX_RETRIES  # first try, after the restart, retries
    assert time.monotonic() - t < 3


def test_a_hosted_server_that_is_down_is_retried_then_explained(stub, monkeypatch):
    monkeypatch.setattr(llm, "BACKOFF_S", (0.05, 0.05))
    server = stub("close")
    conn, restarts = _conn(server.port, 5)
    with pytest.raises(
        ModelError, match="could not connect.*Check OPENAI_API_KEY, OPENAI_BASE_URL"
    ):
        conn.chat(MSG)
    assert server.connections == 1 + llm.MAX_RETRIES and restarts == []


def test_retries_never_run_past_the_budget(fake_model):
    def slow_500(body):
        time.sleep(0.6)
        return httpx.Response(500, json={"error": {"message": "busy"}})

    fake = fake_model([slow_500] * 5)
    s = settings_for("openai", OPENAI_API_KEY="k", COURSE_TIMEOUT_S="1.5")
    conn = connect(settings=s, transport=fake.transport(), quiet=True)
    t = time.monotonic()
    with pytest.raises(ModelError, match="no time left in the 1.5 s budget"):
        conn.chat(MSG)
    assert (
        time.monotonic() - t < 1.5 and len(fake.requests) == 1
    )  # a 1 s backoff would end past the budget


def test_a_passing_5xx_is_retried_and_the_answer_arrives(fake_model, monkeypatch):
    monkeypatch.setattr(llm, "BUSY_WAIT_S", (0.01,))
    fake = fake_model([httpx.Response(503, json={"error": {"message": "loading"}}), "hello"])
    conn = connect(
        settings=settings_for("openai", OPENAI_API_KEY="k"), transport=fake.transport(), quiet=True
    )
    assert conn.chat(MSG).text == "hello" and len(fake.requests) == 2


def test_the_budget_is_a_setting():
    assert settings_for("openai", OPENAI_API_KEY="k").timeout_s == 300
    with pytest.raises(Exception, match="COURSE_TIMEOUT_S must be a positive"):
        settings_for("openai", OPENAI_API_KEY="k", COURSE_TIMEOUT_S="0")


class Busy:
    """An HTTP server on 127.0.0.1 that refuses the first `refusals` chat requests with `status`
    (and a Retry-After of `retry_after` seconds, if given), then answers; records when each came."""

    def __init__(self, refusals: int, status: int = 503, retry_after: str | None = None):
        self.times: list[float] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers.get("content-length", 0)))
                outer.times.append(time.monotonic())
                if len(outer.times) <= refusals:
                    body = json.dumps({"error": {"message": "no slot available"}}).encode()
                    self.send_response(status)
                    if retry_after is not None:
                        self.send_header("Retry-After", retry_after)
                else:
                    body = json.dumps(
                        {
                            "id": "x",
                            "object": "chat.completion",
                            "created": 0,
                            "model": "m",
                            "choices": [
                                {
                                    "index": 0,
                                    "message": {"role": "assistant", "content": "hello"},
                                    "finish_reason": "stop",
                                }
                            ],
                            "usage": {
                                "prompt_tokens": 1,
                                "completion_tokens": 1,
                                "total_tokens": 2,
                            },
                        }
                    ).encode()
                    self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def busy():
    made = []

    def make(*args, **kw):
        made.append(Busy(*args, **kw))
        return made[-1]

    yield make
    for b in made:
        b.close()


@pytest.mark.parametrize("status", [503, 429])
def test_a_full_server_is_asked_again_within_the_budget_then_the_error_says_it_is_busy(
    busy, monkeypatch, status
):
    monkeypatch.setattr(llm, "BUSY_WAIT_S", (0.2, 0.4))
    server = busy(refusals=100, status=status)
    conn, _ = _conn(server.port, 2)
    t = time.monotonic()
    with pytest.raises(ModelError) as caught:
        conn.chat(MSG)
    took, message = time.monotonic() - t, str(caught.value)
    assert took < 2.0, f"a 2 s budget took {took:.1f} s"
    # asked at 0, 0.2, 0.6, 1.0, 1.4, 1.8 s (a slow machine: fewer), never once the budget is spent
    tries = len(server.times)
    assert 4 <= tries <= 6 and server.times[-1] - t < 2.0
    assert f"is busy: it answered HTTP {status} to {tries} tries" in message
    for advice in ("Run the cell again in a minute", "COURSE_WORKERS=1", "tell your instructor"):
        assert advice in message


def test_a_server_that_frees_a_slot_answers_and_its_retry_after_is_kept(busy, monkeypatch):
    monkeypatch.setattr(llm, "BUSY_WAIT_S", (0.01,))
    server = busy(refusals=2, retry_after="0.5")
    conn, _ = _conn(server.port, 5)
    assert conn.chat(MSG).text == "hello" and len(server.times) == 3
    gaps = [b - a for a, b in zip(server.times, server.times[1:], strict=False)]
    assert all(0.45 <= g < 1.0 for g in gaps), gaps  # the server's 0.5 s, not the course's 0.01 s


def test_a_retry_after_past_the_budget_is_not_waited_for(busy):
    server = busy(refusals=100, retry_after="120")
    conn, _ = _conn(server.port, 3)
    t = time.monotonic()
    with pytest.raises(ModelError, match="is busy: it answered HTTP 503 to 1 try"):
        conn.chat(MSG)
    # capped at 60 s, still past a 3 s budget: the error comes at once
    assert time.monotonic() - t < 1.0 and len(server.times) == 1


@pytest.mark.parametrize("backend", ["openai", "local"])
def test_a_stalled_shared_server_gets_the_class_advice_and_the_local_one_does_not(stub, backend):
    conn, _ = _conn(stub("stall").port, 1, backend)
    with pytest.raises(ModelError) as caught:
        conn.chat(MSG)
    assert ("COURSE_WORKERS=1" in str(caught.value)) is (backend == "openai")


def test_a_restarted_local_server_gets_a_whole_budget_of_its_own(stub, busy):
    """A restart (a model load) may take longer than the call's budget: the call to the fresh server has the
    whole budget again, not what was left of the first (here, time to wait once while it is busy)."""
    down, up = stub("close"), busy(refusals=1, retry_after="0.3")
    conn, _ = _conn(down.port, 1.0, "local")

    def restart():
        time.sleep(1.2)
        conn.client.base_url = conn.base_url = f"http://127.0.0.1:{up.port}/v1"

    conn._reconnect_local = restart
    assert conn.chat(MSG).text == "hello" and len(up.times) == 2
