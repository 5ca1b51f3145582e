"""connect() and chat(): banner, accounting, per-role models, JSON format, failure messages."""

import httpx
import openai
import pytest

from course_runtime import client as llm
from course_runtime import connect
from reflect import ModelError
from reflect.model.config import ConfigError
from reflect.model.llm import response_format_for
from tests.conftest import settings_for


def test_openai_backend_chat_and_ledger(fake_model, capsys):
    fake = fake_model(["def f(): pass", "APPROVED"])
    conn = connect(
        settings=settings_for("openai", OPENAI_API_KEY="k", OPENAI_BASE_URL="http://llm.test/v1"),
        transport=fake.transport(),
    )
    banner = capsys.readouterr().out.strip()
    assert (
        banner
        == "[reflect] backend=openai · model=gpt-4o-mini · base_url=http://llm.test/v1 · live"
    )
    client, model = conn
    assert isinstance(client, openai.OpenAI) and model == "gpt-4o-mini"
    r1 = conn.chat([{"role": "user", "content": "write f"}], role="generator", temperature=0.3)
    r2 = conn.chat([{"role": "user", "content": "review it please"}], role="critic", temperature=0)
    assert (r1.text, r2.text) == ("def f(): pass", "APPROVED")
    assert fake.requests[0]["temperature"] == 0.3
    rows = {row["role"]: row for row in conn.ledger.summary()}
    assert rows["generator"]["prompt_tokens"] == 2 and rows["generator"]["completion_tokens"] == 3
    assert rows["total"]["calls"] == 2 and rows["total"]["total_tokens"] == 9
    assert rows["total"]["cost_usd"] == pytest.approx((5 * 0.15 + 4 * 0.60) / 1e6)
    assert "generator" in conn.ledger.table() and "total" in conn.ledger.table()


def test_per_role_model(fake_model):
    fake = fake_model(["a", "b"])
    conn = connect(
        settings=settings_for(
            "openai", OPENAI_API_KEY="k", COURSE_MODEL="gpt-4o", COURSE_MODEL_CRITIC="gpt-4o-mini"
        ),
        transport=fake.transport(),
        quiet=True,
    )
    conn.chat([{"role": "user", "content": "x"}], role="generator")
    conn.chat([{"role": "user", "content": "x"}], role="critic")
    assert [r["model"] for r in fake.requests] == ["gpt-4o", "gpt-4o-mini"]


def test_openai_backend_needs_a_key():
    with pytest.raises(ConfigError, match="needs OPENAI_API_KEY"):
        connect(settings=settings_for("openai"), quiet=True)


def test_replay_needs_a_notebook_name():
    with pytest.raises(ConfigError, match="needs a notebook name"):
        connect(settings=settings_for("replay"), quiet=True)


@pytest.mark.parametrize(
    "status,needle",
    [
        (500, "failed: Error code: 500"),
        (401, "Check OPENAI_API_KEY"),
    ],
)
def test_provider_errors_are_retried_then_explained(fake_model, status, needle, monkeypatch):
    monkeypatch.setattr(llm, "BACKOFF_S", (0.01, 0.01))
    fake = fake_model([httpx.Response(status, json={"error": {"message": "boom"}})] * 3)
    conn = connect(
        settings=settings_for("openai", OPENAI_API_KEY="k"), transport=fake.transport(), quiet=True
    )
    with pytest.raises(ModelError, match=needle):
        conn.chat([{"role": "user", "content": "x"}])
    retried = status == 500
    assert len(fake.requests) == (3 if retried else 1)


def test_connection_refused_is_explained(fake_model):
    def refuse(request):
        raise httpx.ConnectError("Connection refused")

    conn = connect(
        settings=settings_for("openai", OPENAI_API_KEY="k"),
        transport=httpx.MockTransport(refuse),
        quiet=True,
    )
    with pytest.raises(ModelError, match="could not connect"):
        conn.chat([{"role": "user", "content": "x"}])


def test_response_format_is_openais_json_schema_form():
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}}
    assert response_format_for(schema, "verdict") == {
        "type": "json_schema",
        "json_schema": {"name": "verdict", "schema": schema},
    }


def test_empty_content_becomes_empty_text(fake_model):
    fake = fake_model([""])
    conn = connect(
        settings=settings_for("openai", OPENAI_API_KEY="k"), transport=fake.transport(), quiet=True
    )
    assert conn.chat([{"role": "user", "content": "x"}]).text == ""


def test_the_banner_names_an_address_only_where_it_means_something():
    from course_runtime.client import Connection

    local = Connection(
        client=None,
        model="qwen",
        backend="local",
        live_backend="local",
        base_url="http://127.0.0.1:43299/v1",
    )
    hosted = Connection(
        client=None,
        model="gpt-4o-mini",
        backend="openai",
        live_backend="openai",
        base_url="http://class-server:8080/v1",
    )
    assert (
        local.banner()
        == "[reflect] backend=local · model=qwen · the course's local llama.cpp server · live"
    )
    assert "43299" not in local.banner()
    assert (
        hosted.banner()
        == "[reflect] backend=openai · model=gpt-4o-mini · base_url=http://class-server:8080/v1 · live"
    )
