"""A lesson experiment answered from its committed recording (reflect.evaluation.recorded)."""

from __future__ import annotations

import json

import pytest

from reflect.evaluation import recorded as rec
from reflect.model.llm import Reply
from reflect.testing import ScriptedChat

ASK = [{"role": "system", "content": "write"}, {"role": "user", "content": "task"}]
META = {
    "model": "qwen",
    "engine": "llama.cpp",
    "date": "2026-11-24",
    "concurrency": 1,
    "command": "make record NB=02",
}


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    committed, mine = tmp_path / "results", tmp_path / "build"
    monkeypatch.setattr(rec, "recorded_dir", lambda: committed)
    monkeypatch.setattr(rec, "results_dir", lambda: mine)
    return committed, mine


def record_one(committed, reply="recorded reply"):
    """A committed recording holding one reply to ASK at temperature 0, seed 42."""
    live = ScriptedChat({"generator": [reply]})
    calls = rec.RecordedCalls("02_x", live, full=False, meta=META)
    calls(ASK, role="generator", temperature=0, seed=42)
    path = calls.save()
    committed.mkdir(parents=True, exist_ok=True)
    path.rename(committed / path.name)


def test_a_recorded_request_is_answered_from_the_recording_without_a_model_call(dirs):
    committed, _ = dirs
    record_one(committed)
    model = ScriptedChat({"generator": ["the model's reply"]})
    calls = rec.RecordedCalls("02_x", model, full=False, meta={})
    reply = calls(ASK, role="generator", temperature=0, seed=42)
    assert isinstance(reply, Reply) and (reply.text, reply.role, reply.model) == (
        "recorded reply",
        "generator",
        "qwen",
    )
    assert (
        model.calls == []
        and calls.summary() == "1 request(s) answered from the recording, 0 sent to the model"
    )
    assert (
        "model qwen, llama.cpp, recorded 2026-11-24, 1 request(s) at a time, by `make record NB=02`"
        in calls.provenance()
        and calls.save() is None
    )


@pytest.mark.parametrize(
    "change",
    [
        {"messages": [ASK[0], {"role": "user", "content": "task!"}]},  # one character of the prompt
        {"role": "critic"},
        {"temperature": 0.2},
        {"seed": 43},
        {"max_tokens": 300},  # a parameter the recording never saw
    ],
)
def test_any_changed_byte_of_a_request_goes_to_the_model(dirs, change):
    committed, _ = dirs
    record_one(committed)
    model = ScriptedChat({"generator": ["the model's reply"], "critic": ["the model's reply"]})
    calls = rec.RecordedCalls("02_x", model, full=False, meta={})
    params = {
        "temperature": 0,
        "seed": 42,
        **{k: v for k, v in change.items() if k not in ("messages", "role")},
    }
    reply = calls(change.get("messages", ASK), role=change.get("role", "generator"), **params)
    assert reply.text == "the model's reply" and len(model.calls) == 1
    assert calls.summary() == "1 sent to the model"


def test_a_full_run_never_reads_the_recording_and_writes_your_run_beside_it(dirs):
    committed, mine = dirs
    record_one(committed)
    model = ScriptedChat({"generator": ["the model's reply"]})
    calls = rec.RecordedCalls("02_x", model, full=True, meta=META)
    assert calls(ASK, role="generator", temperature=0, seed=42).text == "the model's reply"
    path = calls.save()
    assert path == mine / "02_x.calls.json" and calls.source == "your run"
    saved = json.loads(path.read_text())
    assert saved["meta"] == META and [c["reply"]["text"] for c in saved["calls"]] == [
        "the model's reply"
    ]
    assert (
        json.loads((committed / "02_x.calls.json").read_text())["calls"][0]["reply"]["text"]
        == "recorded reply"
    )


def test_a_corrupt_recording_is_a_clear_error_that_names_the_fix(dirs):
    committed, _ = dirs
    committed.mkdir()
    (committed / "02_x.calls.json").write_text('{"meta": {}, "calls": [{"messages"')
    with pytest.raises(ValueError, match=r"not a recording this course wrote.*make record NB=02"):
        rec.RecordedCalls("02_x", ScriptedChat({}), full=False, meta={})


def test_the_live_sample_is_printed_beside_the_recorded_verdicts():
    then = {
        ("shared", "a"): "approved, tests pass",
        ("own", "a"): "approved, tests pass",
        ("own", "b"): "x",
    }
    now = {
        ("shared", "a"): "approved, tests pass",
        ("own", "a"): "max_iterations, tests fail",
        ("own", "c"): "y",
    }
    assert rec.verdicts_as_recorded(then, now) == (
        "the live sample: 1 of 2 verdicts as recorded\n"
        "  ('own', 'a'): recorded approved, tests pass, this run max_iterations, tests fail"
    )
    assert rec.verdicts_as_recorded(then, then, replayed=True) == (
        "the live sample (replayed here: run live to compare): 3 of 3 verdicts as recorded"
    )


def test_a_run_that_sent_new_requests_saves_every_reply_it_used_under_its_own_provenance(dirs):
    committed, mine = dirs
    record_one(committed)
    model = ScriptedChat({"generator": ["the model's reply"]})
    today = {**META, "date": "2026-12-01", "command": "make record NB=02"}
    calls = rec.RecordedCalls("02_x", model, full=False, meta=today)
    calls(ASK, role="generator", temperature=0, seed=42)  # answered from the recording
    calls(ASK, role="generator", temperature=0, seed=7)  # new: sent to the model
    saved = json.loads(calls.save().read_text())
    assert saved["meta"] == today
    assert sorted(c["reply"]["text"] for c in saved["calls"]) == [
        "recorded reply",
        "the model's reply",
    ]


def test_a_lessons_recording_on_a_connection_saves_what_the_model_answered_when_the_block_ends(
    dirs, monkeypatch
):
    """RecordedCalls.of(conn, name): the connection's chat behind the recording, its provenance naming the lesson's
    record command; as a context manager it saves on leaving, and only when a reply came from the model."""
    from types import SimpleNamespace

    from reflect.evaluation import results

    committed, mine = dirs
    monkeypatch.setattr(results, "full_run", lambda: False)
    conn = SimpleNamespace(
        chat=ScriptedChat({"generator": ["the model's reply"]}),
        model="qwen",
        live_backend="local",
        base_url="http://127.0.0.1:1",
    )
    with rec.RecordedCalls.of(conn, "05_reflexion_memory") as calls:
        calls(ASK, role="generator", temperature=0, seed=42)
    saved = json.loads((mine / "05_reflexion_memory.calls.json").read_text())
    assert saved["meta"]["command"] == "COURSE_FULL=1 make record NB=05"
    assert [c["reply"]["text"] for c in saved["calls"]] == ["the model's reply"]
    (mine / "05_reflexion_memory.calls.json").unlink()
    with rec.RecordedCalls.of(conn, "05_reflexion_memory") as calls:
        pass
    assert not (mine / "05_reflexion_memory.calls.json").exists()
