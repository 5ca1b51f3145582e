"""One-time converter: results files written before the stop reasons were split.

    python tools/migrate_results.py results/*.jsonl     # rewrites each file in place

Until then one reason, "budget", covered three things: one-shot's single draft, a cap on
drafts, attempts or samples, and Reflexion's token budget, which was checked only after an
attempt (two recorded runs went past it). Now they are `single_draft`, `max_iterations` and
`token_budget`, and Reflexion checks its budget before an attempt would pass it.

Rows of other strategies are relabelled by their strategy. A Reflexion row is replayed: the
current `Reflexion` (built from the row's configuration) runs the task against a chat that
answers each call with the row's own recorded reply, after checking that the request is the
one recorded. So the new row is exactly what today's code does with the model's recorded
replies: the same steps, marked where an attempt repeats earlier code, or fewer where the
budget now stops the run before an attempt; a shortened run's drafts are judged again by the
hidden tests. A file with no "budget" row and no Reflexion row is left as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields, replace
from pathlib import Path

from reflect.evaluation.runner import judge_drafts
from reflect.judging.hidden import judge
from reflect.records import Run, Stop
from reflect.strategies.reflexion import Reflexion
from reflect.tasks.task import get_task
from reflect.testing import FakeReply

RELABEL = {"one-shot": Stop.SINGLE_DRAFT}  # every other non-Reflexion strategy's "budget" was its cap


class RecordedChat:
    """Answers each call with the next recorded model step, after checking the request is the recorded one."""

    def __init__(self, run: dict):
        self.steps = [s for s in run["steps"] if s["kind"] == "model"]

    def __call__(self, messages: list[dict], role: str = "generator", **params) -> FakeReply:
        if not self.steps:
            raise RuntimeError("the replay asked for more calls than were recorded")
        step = self.steps.pop(0)
        sent = [str(m.get("content", "")) for m in messages]
        if step["role"] != role or not any(step["request"] in text for text in sent):  # a step keeps its request's main text
            raise RuntimeError(f"the replay's request differs from the recorded one at a {role} call")
        return FakeReply(step["reply"], step["prompt_tokens"], step["completion_tokens"], role)


def reflexion_from(config: str | dict) -> Reflexion:
    """The Reflexion a row's configuration (its repr, or since tools/configs_from_repr.py its config()) describes."""
    if isinstance(config, dict):
        settings = {f.name: config[f.name] for f in fields(Reflexion) if f.name in config}
        if config.get("strategy") != "Reflexion" or settings.get("store") is not None:
            raise ValueError(f"not a replayable Reflexion configuration: {str(config)[:80]}")
        return Reflexion(**settings)
    agent = eval(config, {"Reflexion": Reflexion, "MemoryStore": None})  # noqa: S307 - the course's own committed files
    if not isinstance(agent, Reflexion) or agent.store is not None:
        raise ValueError(f"not a replayable Reflexion configuration: {config[:80]}")
    return agent


def migrate(row: dict) -> dict:
    """The row as today's code would have written it."""
    run = row["run"]
    if not row["strategy"].startswith("reflexion"):
        if run["stop"] == "budget":
            run = {**run, "stop": RELABEL.get(row["strategy"], Stop.MAX_ITERATIONS).value}
        return {**row, "run": run}
    old = Run.from_dict({**run, "stop": Stop.MAX_ITERATIONS.value if run["stop"] == "budget" else run["stop"]})
    if old.stop is Stop.PROVIDER_ERROR:
        return {**row, "run": old.to_dict()}  # the failed call has no recorded reply to replay
    task = get_task(row["task_id"])
    agent = replace(reflexion_from(row["config"]), judge_hidden=False)
    try:
        new = agent.run(task, RecordedChat(run))
    except RuntimeError as err:  # recorded with other prompts (an older file): relabel only
        print(f"  {row['strategy']} on {row['task_id']}: not replayed ({err}); relabelled", file=sys.stderr)
        return {**row, "run": old.to_dict()}
    latencies = {s.index: s.latency_s for s in old.steps}
    steps = tuple(replace(s, latency_s=latencies.get(s.index, 0.0)) for s in new.steps)
    same_code = new.final_code == old.final_code
    passed = old.passed if same_code else judge(task, new.final_code).passed if new.final_code.strip() else False
    new = replace(new, steps=steps, wall_s=old.wall_s, passed=passed)
    out = {**row, "run": new.to_dict()}
    if len(new.steps) != len(old.steps):
        out["drafts"] = judge_drafts(task, new)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path)
    for path in ap.parse_args().files:
        lines = path.read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        if not rows or "run" not in rows[0]:
            print(f"{path}: not a results file, left as it is")
            continue
        new = [json.loads(json.dumps(migrate(r))) for r in rows]
        changed = sum(a != b for a, b in zip(rows, new, strict=True))
        shortened = sum(len(a["run"]["steps"]) != len(b["run"]["steps"]) for a, b in zip(rows, new, strict=True))
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in new), encoding="utf-8")
        print(f"{path}: {changed} of {len(rows)} rows rewritten, {shortened} runs shortened", file=sys.stderr)


if __name__ == "__main__":
    main()
