"""Shared fixtures: an isolated course environment and a fake OpenAI-compatible model."""

import json
from pathlib import Path

import httpx
import pytest

from reflect.model.config import Settings


@pytest.fixture(autouse=True)
def _close_cassettes():
    """A cassette left open would intercept every later test's HTTP calls."""
    yield
    from course_runtime.replay import close_all

    close_all()


@pytest.fixture
def course_env(tmp_path, monkeypatch):
    """No key, no .env from the developer's checkout, private cache/state/cassette folders."""
    for var in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "COURSE_BACKEND",
        "COURSE_MODEL",
        "COURSE_MODEL_PATH",
        "COURSE_LOCAL_MODEL",
        "COURSE_RECORD_FROM",
        "COURSE_MODEL_CRITIC",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COURSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("COURSE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("COURSE_CASSETTE_DIR", str(tmp_path / "cassettes"))
    return tmp_path


class FakeModel:
    """An OpenAI-compatible /chat/completions endpoint for httpx.MockTransport.

    `script` is a list of replies (str) or callables(request_json) -> str | httpx.Response,
    used in order; token counts are derived from the text so they are deterministic.
    """

    def __init__(self, script=None):
        self.script = list(script or [])
        self.requests: list[dict] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.requests.append(body)
        item = self.script.pop(0) if self.script else "ok"
        if callable(item):
            item = item(body)
        if isinstance(item, httpx.Response):
            return item
        prompt = sum(len(str(m.get("content", "")).split()) for m in body["messages"])
        return httpx.Response(
            200,
            json={
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": item},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": len(item.split()),
                    "total_tokens": prompt + len(item.split()),
                },
            },
        )

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


@pytest.fixture
def fake_model():
    return FakeModel


def settings_for(backend, **kw):
    env = {"COURSE_BACKEND": backend, **kw}
    return Settings.from_env(env)


def cmdline(pid: str) -> str:
    """A process's command line from /proc ('' if it is gone or unreadable)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    except OSError:
        return ""
