"""A lesson experiment's model replies, committed, so the lesson recomputes its tables from them
(`RecordedCalls`: a request the recording holds is answered from it, any other goes to the model; its rules:
docs/package.md), and what lesson 03b runs on them: `evaluate_each` and `loop_histories`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..model.cache import request_key
from ..model.llm import Reply
from .results import describe, recorded_dir, results_dir


class RecordedCalls:
    """A chat function answered from a committed recording where it can (see the module docstring)."""

    def __init__(self, name: str, chat: Callable, full: bool, meta: Mapping[str, Any]):
        self.name, self.chat, self.full = name, chat, full
        self.recording = recorded_dir() / f"{name}.calls.json"
        self.meta, self.calls = dict(meta), {}
        self._this_run = dict(meta)  # what a save states: this run made the replies it writes
        if self.recording.exists() and not full:
            self.meta, self.calls = self._load(self.recording)
        self.answered = self.sent = 0
        self._new: dict[str, dict] = {}
        self._lock = threading.Lock()

    @classmethod
    def of(cls, conn: Any, name: str) -> RecordedCalls:
        """A lesson's recording on `conn`: its chat behind it, `COURSE_FULL=1` honoured, and the recording's
        provenance (`recording_meta`) naming the command that re-records it. As a context manager it saves the
        replies on leaving (`save`)."""
        from .results import full_run, recording_meta

        return cls(
            name,
            conn.chat,
            full_run(),
            recording_meta(conn, f"COURSE_FULL=1 make record NB={name.split('_')[0]}"),
        )

    def __enter__(self) -> RecordedCalls:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            self.save()

    @staticmethod
    def _load(path: Path) -> tuple[dict, dict[str, dict]]:
        try:
            data = json.loads(path.read_text())
            return data["meta"], {
                request_key(c["messages"], c["role"], c["params"]): c for c in data["calls"]
            }
        except (ValueError, KeyError, TypeError) as err:
            raise ValueError(
                f"{path} is not a recording this course wrote ({err}). Re-record the lesson "
                f"(make record NB={path.name.split('_')[0]} KEEP=1) or run it with COURSE_FULL=1."
            ) from err

    def __call__(self, messages: list[dict], role: str = "generator", **params):
        key = request_key(messages, role, params)
        with self._lock:
            call = self.calls.get(key)
            if call is not None:
                self.answered += 1
                self._new.setdefault(key, call)
        if call is not None:
            r = call["reply"]
            return Reply(
                text=r["text"],
                role=role,
                model=self.meta.get("model", ""),
                prompt_tokens=r["prompt_tokens"],
                completion_tokens=r["completion_tokens"],
                latency_s=r.get("latency_s", 0.0),
                finish_reason=r.get("finish_reason"),
            )
        reply = self.chat(messages, role=role, **params)
        entry = {
            "messages": messages,
            "role": role,
            "params": dict(params),
            "reply": {
                "text": reply.text,
                "prompt_tokens": reply.prompt_tokens,
                "completion_tokens": reply.completion_tokens,
                "latency_s": round(getattr(reply, "latency_s", 0.0), 2),
                "finish_reason": getattr(reply, "finish_reason", None),
            },
        }
        with self._lock:
            self.sent += 1
            self._new[key] = entry
        return reply

    @property
    def source(self) -> str:
        """Where the experiment's replies came from, as the lesson says it."""
        if self.full or not self.recording.exists():
            return "your run" if results_dir() != recorded_dir() else "the recording"
        return "the recording"

    def provenance(self) -> str:
        """One line on the replies' origin: model, engine, date, requests at a time, recording command."""
        return f"replies from {self.source}: {describe(self.meta) or 'no provenance recorded'}"

    def summary(self) -> str:
        """How many requests the recording answered and how many went to the model."""
        told = f"{self.answered} request(s) answered from the recording, " if self.answered else ""
        return f"{told}{self.sent} sent to the model"

    def save(self) -> Path | None:
        """Write the calls this run used, when any went to the model (your run, or a recording)."""
        if not self.sent:
            return None
        path = results_dir() / f"{self.name}.calls.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        calls = [self._new[k] for k in sorted(self._new)]
        path.write_text(
            json.dumps({"meta": self._this_run, "calls": calls}, indent=1, ensure_ascii=False)
            + "\n"
        )
        return path


def verdicts_as_recorded(
    recorded: Mapping[str, Any], live: Mapping[str, Any], replayed: bool = False
) -> str:
    """The live sample's verdicts beside the recording's, for the keys both have: "3 of 3 verdicts
    as recorded", then one line per verdict that moved; `replayed` says the sample itself came from
    the recording (so it agrees by construction)."""
    keys = [k for k in live if k in recorded]
    moved = [
        f"  {k}: recorded {recorded[k]}, this run {live[k]}" for k in keys if recorded[k] != live[k]
    ]
    return "\n".join(
        [
            f"the live sample{' (replayed here: run live to compare)' if replayed else ''}: "
            f"{len(keys) - len(moved)} of {len(keys)} verdicts as recorded",
            *moved,
        ]
    )


def evaluate_each(
    critics: Mapping[str, Any],
    tasks: Mapping[str, Any],
    drafts: Mapping[str, str],
    spread: Callable = map,
) -> dict[str, dict[str, Any]]:
    """Every critic on every draft (`drafts`: task id -> code), task by task; `spread` runs the independent
    evaluations (`conn.map`: the server's slots). Returns critic name -> task id -> Evaluation."""
    jobs = [(name, k) for k in drafts for name in critics]
    results = list(
        spread(lambda job: critics[job[0]].evaluate(tasks[job[1]], drafts[job[1]]), jobs)
    )
    return {
        name: {k: ev for (n, k), ev in zip(jobs, results, strict=True) if n == name}
        for name in critics
    }


def loop_histories(
    chat: Callable,
    tasks: Mapping[str, Any],
    drafts: Mapping[str, str],
    critic: Any,
    rule: Any,
    spread: Callable = map,
) -> dict[str, list]:
    """`scored_reflection` with `critic` and `rule` from each first draft (task id -> code), the loops spread by
    `spread`: task id -> the loop's drafts as the rule reads them, each with its hidden-test verdict in `passed`."""
    from dataclasses import replace

    from ..judging.hidden import judge
    from ..strategies import scored_reflection

    def one(k: str) -> list:
        run = scored_reflection(chat, tasks[k], critic, rule, first_draft=drafts[k])
        return [replace(a, passed=judge(tasks[k], a.code).passed) for a in rule.drafts(run.steps)]

    return dict(zip(drafts, spread(one, list(drafts)), strict=True))
