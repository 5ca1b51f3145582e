"""Record, then replay with the network blocked: identical outputs; misses are loud."""

import dataclasses

import httpx
import pytest
import yaml
from pytest_socket import disable_socket, enable_socket

from course_runtime import connect
from course_runtime.replay import ReplayMiss, recorded_requests
from tests.conftest import settings_for

# built at run time: no key-shaped literal in git
FAKE_KEY = "sk-" + "live-" + "abcdefghijklmnopqrstuvwxyz123456"
MSGS = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hi"}]


def _record(course_env, fake_model, replies, key=FAKE_KEY):
    fake = fake_model(replies)
    s = settings_for(
        "record",
        COURSE_RECORD_FROM="openai",
        OPENAI_API_KEY=key,
        COURSE_CASSETTE_DIR=str(course_env / "cassettes"),
    )
    conn = connect("01_demo", settings=s, transport=fake.transport(), quiet=True)
    out = [
        conn.chat(MSGS, role="generator", temperature=0),
        conn.chat(MSGS[:1] + [MSGS[1] | {"content": "again"}], role="critic"),
    ]
    conn.recorder.close()
    return conn, out


def _replay(course_env, **env):
    s = settings_for("replay", COURSE_CASSETTE_DIR=str(course_env / "cassettes"), **env)
    return connect("01_demo", settings=s, quiet=True)


def test_round_trip_is_identical_with_network_blocked(course_env, fake_model):
    rec, live = _record(course_env, fake_model, ["hello there", "hi again"])
    disable_socket()
    try:
        conn = _replay(course_env)
        again = [
            conn.chat(MSGS, role="generator", temperature=0),
            conn.chat(MSGS[:1] + [MSGS[1] | {"content": "again"}], role="critic"),
        ]
    finally:
        enable_socket()
    assert [repr(r) for r in again] == [repr(r) for r in live]  # text, tokens, latency, model
    assert conn.ledger.table() == rec.ledger.table()
    assert all(r.replayed for r in conn.ledger.records)  # labelled as the recording's time
    assert not any(r.replayed for r in rec.ledger.records)
    assert conn.model == "gpt-4o-mini" and conn.live_backend == "openai"
    assert conn.banner().startswith(
        "[reflect] backend=replay (recorded from openai) · model=gpt-4o-mini"
    )
    assert "base_url" not in conn.banner() and "cassette" in conn.banner()


def test_changed_prompt_is_a_miss_naming_notebook_and_fix(course_env, fake_model):
    _record(course_env, fake_model, ["hello", "again"])
    conn = _replay(course_env)
    with pytest.raises(ReplayMiss) as info:
        conn.chat(
            [MSGS[0], {"role": "user", "content": "Say hello"}], role="generator", temperature=0
        )
    msg = str(info.value)
    assert "Replay miss in notebook '01_demo'" in msg and "make record NB=01" in msg
    lines = msg.splitlines()
    assert any(ln.startswith("-") and '"Say hi"' in ln for ln in lines)
    assert any(ln.startswith("+") and '"Say hello"' in ln for ln in lines)


def test_changed_parameter_is_a_miss(course_env, fake_model):
    _record(course_env, fake_model, ["hello", "again"])
    with pytest.raises(ReplayMiss):
        _replay(course_env).chat(MSGS, role="generator", temperature=0.7)


def test_a_request_asked_again_replays_its_recording_again(course_env, fake_model):
    _record(course_env, fake_model, ["hello", "again"])
    conn = _replay(course_env)
    first = conn.chat(MSGS, role="generator", temperature=0)
    assert (
        conn.chat(MSGS, role="generator", temperature=0).text == first.text == "hello"
    )  # a cell run twice


class FakeServer:
    """What `local` returns: a started server's address and key."""

    base_url = "http://127.0.0.1:9999/v1"
    key = "local-key"


def _replay_with_fallback(course_env, fake, local):
    from course_runtime import client as llm

    s = settings_for(
        "replay", COURSE_CASSETTE_DIR=str(course_env / "cassettes"), COURSE_REPLAY_MISS="live"
    )
    return llm.connect("01_demo", settings=s, transport=fake.transport(), quiet=True, local=local)


def test_in_a_learners_session_a_miss_goes_to_the_local_model_with_one_line(
    course_env, fake_model, capsys
):
    _record(course_env, fake_model, ["hello", "again"])
    before = (course_env / "cassettes" / "01_demo.yaml").read_text()
    seen = []
    live = fake_model(["live one", "live two"])

    def spy(request):
        seen.append((str(request.url), request.headers["authorization"]))
        return live(request)

    starts = []
    conn = _replay_with_fallback(
        course_env,
        type("T", (), {"transport": lambda self: httpx.MockTransport(spy)})(),
        lambda settings: starts.append(1) or FakeServer(),
    )
    assert conn.chat(MSGS, role="generator", temperature=0).text == "hello"  # recorded: replayed
    assert not starts and not seen  # no server started for a request the recording holds
    mine = [MSGS[0], {"role": "user", "content": "Say hello"}]
    assert conn.chat(mine, role="generator", temperature=0).text == "live one"
    assert conn.chat(mine, role="generator", temperature=0.5).text == "live two"
    assert seen == [("http://127.0.0.1:9999/v1/chat/completions", "Bearer local-key")] * 2
    assert len(starts) == 1
    assert capsys.readouterr().out.count("answered by the local model, live") == 1
    assert (course_env / "cassettes" / "01_demo.yaml").read_text() == before  # nothing recorded


def test_in_a_learners_session_without_a_local_model_a_miss_says_what_to_do(course_env, fake_model):
    _record(course_env, fake_model, ["hello", "again"])

    def no_model(settings):
        raise FileNotFoundError("no model file")

    conn = _replay_with_fallback(course_env, fake_model([]), no_model)
    with pytest.raises(ReplayMiss) as info:
        conn.chat([MSGS[0], {"role": "user", "content": "Say hello"}], role="generator")
    msg = str(info.value)
    assert "unset COURSE_BACKEND" in msg and "make record" not in msg and "no model file" in msg


def test_a_miss_stops_unless_a_person_opened_the_notebook_outside_ci():
    from reflect.model.config import ConfigError

    assert settings_for("replay").replay_miss == "stop"  # nbval, nbclient, scripts
    assert settings_for("replay", JPY_SESSION_NAME="02.ipynb").replay_miss == "live"
    assert settings_for("replay", JPY_SESSION_NAME="02.ipynb", CI="true").replay_miss == "stop"
    assert settings_for("replay", COURSE_REPLAY_MISS="live").replay_miss == "live"
    with pytest.raises(ConfigError, match="COURSE_REPLAY_MISS"):
        settings_for("replay", COURSE_REPLAY_MISS="sometimes")


def test_a_miss_is_not_swallowed_by_except_exception(course_env, fake_model):
    _record(course_env, fake_model, ["hello", "again"])
    conn = _replay(course_env)
    with pytest.raises(ReplayMiss):
        try:
            conn.chat(MSGS, role="generator", temperature=1)
        except Exception:  # what a tolerant loop does with provider errors
            pytest.fail("a replay miss must not be an ordinary Exception")


def test_missing_cassette_says_how_to_record(course_env):
    with pytest.raises(FileNotFoundError, match="make record NB=07"):
        connect(
            "07_nothing",
            settings=settings_for("replay", COURSE_CASSETTE_DIR=str(course_env / "cassettes")),
            quiet=True,
        )


def test_cassette_is_readable_and_scrubbed(course_env, fake_model):
    key = FAKE_KEY
    _record(course_env, fake_model, ["hello", "again"], key=key)
    text = (course_env / "cassettes" / "01_demo.yaml").read_text()
    assert key not in text and "authorization" not in text.lower() and "Bearer" not in text
    data = yaml.safe_load(text)
    req = data["interactions"][0]["request"]
    assert set(k.lower() for k in req["headers"]) <= {
        "content-type",
        "x-course-role",
        "x-course-backend",
    }
    assert '"Say hi"' in req["body"]
    assert "x-course-latency-ms" in data["interactions"][0]["response"]["headers"]


def test_recording_is_saved_after_every_call(course_env, fake_model):
    fake = fake_model(["one"])
    s = settings_for(
        "record",
        COURSE_RECORD_FROM="openai",
        OPENAI_API_KEY="k",
        COURSE_CASSETTE_DIR=str(course_env / "cassettes"),
    )
    conn = connect("02_partial", settings=s, transport=fake.transport(), quiet=True)
    conn.chat(MSGS)
    # not closed: a kernel that dies mid-notebook still leaves the calls made so far
    data = yaml.safe_load((course_env / "cassettes" / "02_partial.yaml").read_text())
    assert len(data["interactions"]) == 1
    conn.recorder.close()


def _chat_all(conn, prompts):
    return [
        conn.chat([MSGS[0], {"role": "user", "content": p}], role="generator", temperature=0).text
        for p in prompts
    ]


def test_keep_mode_records_only_new_calls_and_prune_drops_unused(
    course_env, fake_model, monkeypatch
):
    rec = settings_for(
        "record",
        COURSE_RECORD_FROM="openai",
        OPENAI_API_KEY=FAKE_KEY,
        COURSE_CASSETTE_DIR=str(course_env / "cassettes"),
    )
    first = fake_model(["A1", "B1", "D1"])
    conn = connect("01_demo", settings=rec, transport=first.transport(), quiet=True)
    assert _chat_all(conn, ["a", "b", "d"]) == ["A1", "B1", "D1"]
    conn.recorder.close()

    # the notebook changed: "b" is gone, "c" is new
    second = fake_model(["C2"])
    keep = dataclasses.replace(rec, record_keep=True)
    conn = connect("01_demo", settings=keep, transport=second.transport(), quiet=True)
    assert _chat_all(conn, ["a", "d", "c"]) == [
        "A1",
        "D1",
        "C2",
    ]  # "a", "d" replayed; only "c" went to the model
    assert [r["messages"][1]["content"] for r in second.requests] == ["c"]
    conn.recorder.close()

    def prompts():
        cassette = course_env / "cassettes" / "01_demo.yaml"
        return [r["body"]["messages"][1]["content"] for r in recorded_requests(cassette)]

    assert sorted(prompts()) == ["a", "b", "c", "d"]  # kept until a clean replay prunes

    conn = _replay(course_env, COURSE_REPLAY_PRUNE="1")
    assert _chat_all(conn, ["a", "d", "c"]) == ["A1", "D1", "C2"]
    conn.recorder.close()
    assert prompts() == ["a", "d", "c"]
    assert _chat_all(_replay(course_env), ["a", "d", "c"]) == ["A1", "D1", "C2"]


def _echo(body):
    return "re: " + body["messages"][-1]["content"]


def _record_prompts(course_env, fake_model, prompts, replies=None):
    fake = fake_model(replies or [_echo] * len(prompts))
    s = settings_for(
        "record",
        COURSE_RECORD_FROM="openai",
        OPENAI_API_KEY="k",
        COURSE_CASSETTE_DIR=str(course_env / "cassettes"),
    )
    conn = connect("01_demo", settings=s, transport=fake.transport(), quiet=True)
    out = _chat_all(conn, prompts)
    conn.recorder.close()
    return out


def test_replay_answers_requests_in_any_order(course_env, fake_model):
    _record_prompts(course_env, fake_model, ["a", "b", "c"])
    assert _chat_all(_replay(course_env), ["c", "a", "b"]) == ["re: c", "re: a", "re: b"]


def test_identical_requests_replay_in_the_order_they_were_recorded(course_env, fake_model):
    assert _record_prompts(course_env, fake_model, ["same", "same"], ["first", "second"]) == [
        "first",
        "second",
    ]
    conn = _replay(course_env)
    assert _chat_all(conn, ["same", "same"]) == ["first", "second"]
    assert _chat_all(conn, ["same"]) == ["second"]  # then the last one again


def test_many_threads_replay_every_answer_to_its_own_request(course_env, fake_model):
    prompts = [f"task {i}" for i in range(40)]
    _record_prompts(course_env, fake_model, prompts)
    conn = _replay(course_env, COURSE_WORKERS="8")
    replies = conn.map(
        lambda p: conn.chat([MSGS[0], {"role": "user", "content": p}], temperature=0), prompts
    )
    assert [r.text for r in replies] == [f"re: {p}" for p in prompts]
    assert len(conn.ledger.records) == 40


def test_recording_from_many_threads_keeps_every_call(course_env, fake_model):
    prompts = [f"task {i}" for i in range(30)]
    fake = fake_model([_echo] * 30)
    s = settings_for(
        "record",
        COURSE_RECORD_FROM="openai",
        OPENAI_API_KEY="k",
        COURSE_WORKERS="6",
        COURSE_CASSETTE_DIR=str(course_env / "cassettes"),
    )
    conn = connect("01_demo", settings=s, transport=fake.transport(), quiet=True)
    conn.map(lambda p: conn.chat([MSGS[0], {"role": "user", "content": p}], temperature=0), prompts)
    recorded = recorded_requests(course_env / "cassettes" / "01_demo.yaml")
    assert sorted(r["body"]["messages"][1]["content"] for r in recorded) == sorted(prompts)


def test_each_concurrent_live_call_reports_its_own_latency(course_env, fake_model):
    import time

    def slow_or_fast(body):
        time.sleep(0.6 if body["messages"][-1]["content"] == "slow" else 0.0)
        return "done"

    fake = fake_model([slow_or_fast] * 4)
    conn = connect(
        settings=settings_for("openai", OPENAI_API_KEY="k", COURSE_WORKERS="4"),
        transport=fake.transport(),
        quiet=True,
    )
    replies = conn.map(
        lambda p: conn.chat([{"role": "user", "content": p}]), ["slow", "fast", "fast", "slow"]
    )
    assert [r.latency_s >= 0.6 for r in replies] == [True, False, False, True]


def test_when_grading_a_miss_is_an_empty_reply_and_the_recording_still_answers(
    course_env, fake_model
):
    """COURSE_REPLAY_MISS=empty (course.py grade): a request the recording lacks gets an empty reply with no
    tokens, and never reaches a model; a recorded one is replayed as ever."""
    _record(course_env, fake_model, ["hello", "again"])
    s = settings_for(
        "replay", COURSE_CASSETTE_DIR=str(course_env / "cassettes"), COURSE_REPLAY_MISS="empty"
    )
    conn = connect("01_demo", settings=s, quiet=True)
    assert conn.chat(MSGS, role="generator", temperature=0).text == "hello"
    mine = conn.chat(
        [MSGS[0], {"role": "user", "content": "Something else"}], role="generator", temperature=0
    )
    assert (mine.text, mine.prompt_tokens, mine.completion_tokens) == ("", 0, 0)


def test_a_miss_on_a_long_prompt_shows_where_it_differs(course_env, fake_model):
    """A whole prompt is one line of the request's JSON: the miss shows the changed pair of lines from a little
    before their first difference, so a rule added after 340 characters of a prompt is in view."""
    long = "You review code. " * 20
    s = settings_for(
        "record",
        COURSE_RECORD_FROM="openai",
        OPENAI_API_KEY=FAKE_KEY,
        COURSE_CASSETTE_DIR=str(course_env / "cassettes"),
    )
    rec = connect("01_demo", settings=s, transport=fake_model(["ok"]).transport(), quiet=True)
    rec.chat([{"role": "system", "content": long}, MSGS[1]], role="reviewer", temperature=0)
    rec.recorder.close()
    with pytest.raises(ReplayMiss) as info:
        _replay(course_env).chat(
            [{"role": "system", "content": long + "Never approve sorted()."}, MSGS[1]],
            role="reviewer",
            temperature=0,
        )
    lines = str(info.value).splitlines()
    assert any(ln.startswith("+") and "Never approve sorted()" in ln for ln in lines), lines
