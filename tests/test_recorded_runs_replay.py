"""The committed runs of Reflexion, resampling and maker-checker, replayed through today's code on their own recorded
replies, come out step for step the same: the same requests (each checked against the recorded
one), verdicts, notes, stop, chosen draft and the reason given. A refactor of the shared parts (the
best-so-far, the generator's messages, the stop rules) that changed any decision fails here.

The whole set is 350 runs (about 50 s); this test replays every third run of each file (but one whose
own tests hung: 10 s of CPU each, for one more failed test) and every run that stopped on a rare rule
(regressed, token budget): about 130, with ties among samples (checked below). No recorded run stopped
on `converged`, which cannot fire with 3 attempts and patience 3."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path

import pytest

from reflect.evaluation.runner import config_of
from reflect.records import Run, Stop
from reflect.strategies import MakerChecker
from reflect.strategies.reflexion import Reflexion
from reflect.strategies.resample import Resample
from reflect.tasks.task import get_task
from reflect.testing import FakeReply


class RecordedChat:
    """Answers each call with a recorded run's next model step, after checking that the call asks for
    what was recorded (the same role, and the step's request among the messages' texts): a committed
    run replayed through today's code (tests/test_recorded_runs_replay.py)."""

    def __init__(self, run: dict):
        self.steps = [s for s in run["steps"] if s["kind"] == "model"]

    def __call__(self, messages: list[dict], role: str = "generator", **params) -> FakeReply:
        if not self.steps:
            raise RuntimeError("the replay asked for more calls than were recorded")
        step = self.steps.pop(0)
        sent = [str(m.get("content", "")) for m in messages]
        if step["role"] != role or not any(step["request"] in text for text in sent):
            raise RuntimeError(
                f"the replay's request differs from the recorded one at a {role} call"
            )
        return FakeReply(step["reply"], step["prompt_tokens"], step["completion_tokens"], role)


ROOT = Path(__file__).resolve().parents[1]
# The scored loop is not here: its critic step keeps the critique as read (score, issues), not the critic's raw
# reply, so a recorded run cannot answer its critic calls (lessons 03, 03b and 06 replay it from their cassettes).
CLASSES = {"Reflexion": Reflexion, "Resample": Resample, "MakerChecker": MakerChecker}
ALL_FILES = sorted((ROOT / "results").glob("0*.jsonl"))


def built(config: dict):
    """The strategy a run's config describes, as today's code builds it."""
    cls = CLASSES[config["strategy"]]
    return cls(**{f.name: config[f.name] for f in fields(cls) if f.name in config})


def replayable(path: Path) -> list[dict]:
    """The runs of a configuration today's code builds exactly (an older configuration's runs, kept
    as its record, sent other prompts), with no memory store and no provider error."""
    rows = [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    return [
        r
        for r in rows
        if r["config"].get("strategy") in CLASSES
        and config_of(built(r["config"])) == r["config"]
        and r["config"].get("store") is None
        and r["run"]["stop"] != Stop.PROVIDER_ERROR
    ]


def strategy_of(config: dict):
    return replace(built(config), judge_hidden=False)


# 05_memory_modes_v1 holds only an older configuration's runs
FILES = [p for p in ALL_FILES if replayable(p)]


def hung(row: dict) -> bool:
    """A draft whose own tests timed out: replaying it burns the sandbox's 10 s of CPU, and to the loop it is one
    more failed test (tests/test_sandbox*.py hold the timeouts themselves)."""
    return any(
        s["role"] == "tests" and "# output: timed out" in s["reply"] for s in row["run"]["steps"]
    )


def sample(rows: list[dict]) -> list[dict]:
    """Every third run (every 37th of a file over 1,000 runs: lesson 06's fair test, whose 8 arms and
    replicates come in turn, 37 prime to 8 so each is sampled) that did not hang, and every run that stopped on
    a rare rule (the one token-budget stop hung)."""
    step = 37 if len(rows) > 1000 else 3
    return [
        r
        for i, r in enumerate(rows)
        if (i % step == 0 and not hung(r))
        or r["run"]["stop"] in (Stop.REGRESSED, Stop.TOKEN_BUDGET)
    ]


def decisions(run: Run) -> tuple:
    return (
        run.final_code,
        run.stop,
        run.chosen,
        [(s.role, s.verdict, s.note, s.code) for s in run.steps],
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_recorded_runs_replay_to_the_same_decisions(path):
    rows = sample(replayable(path))
    differ = []
    for row in rows:
        new = strategy_of(row["config"]).run(get_task(row["task_id"]), RecordedChat(row["run"]))
        if decisions(new) != decisions(Run.from_dict(row["run"])):
            differ.append(f"{row['strategy']} on {row['task_id']}: {new.chosen!r} ({new.stop})")
    assert differ == [], "\n".join(differ)


def test_the_sample_covers_the_decisions_that_matter():
    runs = [Run.from_dict(r["run"]) for path in FILES for r in sample(replayable(path))]
    stops = {r.stop for r in runs}
    assert {Stop.ACCEPTED, Stop.MAX_ITERATIONS, Stop.REGRESSED, Stop.TOKEN_BUDGET} <= stops, stops
    tied = [
        r
        for r in runs
        if r.chosen.startswith("sample 1:")
        and r.strategy == "resample"
        and sum(s.role == "tests" and s.verdict.accepted for s in r.steps) > 1
    ]
    assert len(tied) >= 5  # several samples passed every assert, and the first was returned
