"""The live request cache (course_runtime.response_cache): a deterministic request sent before is answered
from disk; anything else, a changed byte, another model file, a sampled request, a reply that
came back batched with another, or a corrupt entry, goes to the model."""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from course_runtime.client import Connection
from course_runtime.replay import CourseTransport
from course_runtime.response_cache import ResponseCache, clear, model_fingerprint, stats
from reflect.model.cache import deterministic
from reflect.model.config import Settings

ASK = [{"role": "user", "content": "write f"}]


def connection(fake, cache: ResponseCache | None) -> Connection:
    transport = CourseTransport(fake.transport(), None, cache)
    client = openai.OpenAI(
        api_key="k",
        base_url="http://127.0.0.1:9/v1",
        max_retries=0,
        http_client=httpx.Client(transport=transport),
    )
    return Connection(
        client=client,
        model="qwen",
        backend="local",
        live_backend="local",
        base_url="http://127.0.0.1:9/v1",
        transport=transport,
    )


@pytest.fixture
def cache(tmp_path):
    return ResponseCache(tmp_path / "responses", "model-a")


def test_a_repeated_deterministic_request_is_answered_from_the_cache_and_counted(fake_model, cache):
    fake = fake_model(["def f(): return 1", "something else"])
    conn = connection(fake, cache)
    first = conn.chat(ASK, temperature=0, seed=42, max_tokens=64)
    again = conn.chat(ASK, temperature=0, seed=42, max_tokens=64)
    assert len(fake.requests) == 1 and again.text == first.text == "def f(): return 1"
    assert (again.prompt_tokens, again.completion_tokens) == (
        first.prompt_tokens,
        first.completion_tokens,
    )
    assert [r.cached for r in conn.ledger.records] == [False, True] and cache.hits == 1
    assert "2 model calls (1 answered from the cache, 6 tokens)" in conn.ledger.model_time()


@pytest.mark.parametrize(
    "changed",
    [
        {"messages": [{"role": "user", "content": "write f "}]},
        {"max_tokens": 65},
        {"seed": 43},
        {"messages": [{"role": "system", "content": "be brief"}, *ASK]},
    ],
)
def test_any_changed_byte_is_a_miss(fake_model, cache, changed):
    fake = fake_model(["one", "two"])
    conn = connection(fake, cache)
    conn.chat(ASK, temperature=0, seed=42, max_tokens=64)
    kwargs = {"messages": ASK, "temperature": 0, "seed": 42, "max_tokens": 64} | changed
    assert conn.chat(kwargs.pop("messages"), **kwargs).text == "two" and len(fake.requests) == 2


def test_another_model_file_never_gets_this_ones_replies(fake_model, tmp_path):
    a, b = (ResponseCache(tmp_path / "responses", name) for name in ("model-a", "model-b"))
    connection(fake_model(["from a"]), a).chat(ASK, temperature=0)
    other = fake_model(["from b"])
    assert (
        connection(other, b).chat(ASK, temperature=0).text == "from b" and len(other.requests) == 1
    )


@pytest.mark.parametrize(
    "params, cached",
    [
        ({"temperature": 0.7}, False),  # sampled: a new answer each time
        ({}, False),  # no temperature: the server's default samples
        ({"temperature": 0.7, "seed": 7}, True),  # a fixed seed: the same answer each time
        ({"temperature": 0}, True),
    ],
)
def test_only_deterministic_requests_are_cached(fake_model, cache, params, cached):
    fake = fake_model(["one", "two"])
    conn = connection(fake, cache)
    conn.chat(ASK, **params)
    second = conn.chat(ASK, **params)
    assert (second.text == "one") is cached and len(fake.requests) == (1 if cached else 2)
    assert stats(cache.root) == ([("model-a", 1, stats(cache.root)[0][2])] if cached else [])
    assert (
        deterministic({"temperature": 0.0})
        and not deterministic({"temperature": 0.2})
        and not deterministic("x")
    )


def test_a_corrupt_entry_is_ignored_with_a_warning_and_never_answers(fake_model, cache):
    fake = fake_model(["right", "right again"])
    conn = connection(fake, cache)
    conn.chat(ASK, temperature=0)
    (entry,) = cache.folder.glob("*.json")
    for broken in (
        "{not json",
        json.dumps({**json.loads(entry.read_text()), "response": "truncated {"}),
        json.dumps({**json.loads(entry.read_text()), "request": "another request"}),
    ):
        entry.write_text(broken)
        with pytest.warns(UserWarning, match="corrupt cache entry"):
            reply = conn.chat(ASK, temperature=0)
        assert reply.text.startswith("right") and not conn.ledger.records[-1].cached
        fake.script.append("right again")
    assert (
        len(fake.requests) == 4 and json.loads(entry.read_text())["format"] == 1
    )  # rewritten whole


def test_a_reply_that_came_back_beside_another_request_is_not_stored(fake_model, cache):
    conn = connection(fake_model(["batched"]), cache)
    cache.begin()  # another request is in flight
    conn.chat(ASK, temperature=0)
    cache.end()
    assert stats(cache.root) == [] and cache.stored == 0


def test_course_cache_off_and_clear(fake_model, cache):
    assert Settings.from_env({"COURSE_BACKEND": "local", "COURSE_CACHE": "off"}).cache is False
    assert Settings.from_env({"COURSE_BACKEND": "local"}).cache is True
    connection(fake_model(["x"]), cache).chat(ASK, temperature=0)
    assert clear(cache.root) == 1 and stats(cache.root) == []


def test_the_fingerprint_tells_model_files_apart(tmp_path):
    a, b, c = tmp_path / "a.gguf", tmp_path / "b.gguf", tmp_path / "c.gguf"
    a.write_bytes(b"GGUF" + b"\1" * 3_000_000)
    b.write_bytes(b"GGUF" + b"\2" + b"\1" * 2_999_999)
    c.write_bytes(b"GGUF" + b"\1" * 3_000_000)
    assert model_fingerprint(a) != model_fingerprint(b)
    assert model_fingerprint(a).split("-")[-1] == model_fingerprint(c).split("-")[-1]


def test_replay_never_reads_the_cache(fake_model, cache, tmp_path):
    from course_runtime.replay import Recorder

    connection(fake_model(["cached"]), cache).chat(ASK, temperature=0)
    rec = Recorder("99_x", tmp_path / "99_x.yaml", "replay")
    rec.path.write_text("interactions: []\nversion: 1\n")
    transport = CourseTransport(fake_model([]).transport(), rec.open(), cache)
    from course_runtime.replay import ReplayMiss

    sent = json.loads(next(cache.folder.glob("*.json")).read_text())[
        "request"
    ]  # the cached request, byte for byte
    assert cache.get(sent.encode()) is not None
    with pytest.raises(ReplayMiss):
        transport.handle_request(
            httpx.Request("POST", "http://x/v1/chat/completions", content=sent.encode())
        )


def test_the_local_backend_gets_the_cache_of_its_servers_model_file(course_env, monkeypatch):
    from types import SimpleNamespace

    import course_runtime.client as runtime

    model = course_env / "m.gguf"
    model.write_bytes(b"GGUF" + b"\1" * 3_000_000)
    server = SimpleNamespace(
        base_url="http://127.0.0.1:9/v1", alias="qwen", key="k", model_path=model
    )
    monkeypatch.setattr(runtime, "ensure_server", lambda settings: server)
    conn = runtime.connect(settings=Settings.from_env({"COURSE_BACKEND": "local"}), quiet=True)
    cache = conn.transport.cache
    assert isinstance(cache, ResponseCache) and cache.model == model_fingerprint(model)
    assert cache.root == course_env / "cache" / "responses" and "request cache on" in conn.banner()
    off = Settings.from_env({"COURSE_BACKEND": "local", "COURSE_CACHE": "off"})
    assert runtime.connect(settings=off, quiet=True).transport.cache is None
