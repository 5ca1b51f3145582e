"""Lesson 04's graph state: a run's input state and config (`start_state`, `run_config`, `fresh_thread`), and
what is read off its record: this run's steps, the current draft, the number of drafts, the
last critique and its status; a critique as a step (`critic_step`), and a critic's Evaluation as a status
(`normalise`). The graph keeps no field it can read off its steps."""

from __future__ import annotations

import itertools
from typing import Literal

from ..judging.critics import Evaluation
from ..judging.sentinel import strict_sentinel
from ..records import Step, Verdict

_SENTINELS = ("APPROVED", "CODE_IS_PERFECT")

_CritiqueStatus = Literal["accepted", "needs_revision", "invalid"]

_STATUS = {
    True: "accepted",
    False: "needs_revision",
    None: "invalid",
}  # a Verdict's `accepted` as a status
_ACCEPTS = {status: accepted for accepted, status in _STATUS.items()}


def this_run(state: dict, key: str) -> list:
    """This run's entries of an appending list (a reused thread also holds earlier runs')."""
    return list(state.get(key, []))[(state.get("run_start") or {}).get(key, 0) :]


def steps_of(state: dict) -> list[Step]:
    """This run's steps, as `Step`s."""
    return [Step.from_dict(d) for d in this_run(state, "steps")]


def _drafting(state: dict) -> list[Step]:
    return [s for s in steps_of(state) if s.role in ("generator", "refiner")]


def current_draft(state: dict) -> str | None:
    """The last draft of this run that held code (a reply in prose does not blank it), or the code a
    person's accepted decision put in its place; None before any."""
    codes = [
        s.code
        for s in steps_of(state)
        if s.code
        and s.code.strip()
        and (
            s.role in ("generator", "refiner")
            or (s.role == "human" and "refused" not in (s.note or ""))
        )
    ]
    return codes[-1] if codes else None


def iteration(state: dict) -> int:
    """How many drafts this run asked for (a reply with no code counts)."""
    return len(_drafting(state))


def reply_has_code(state: dict) -> bool | None:
    """Whether the latest generate or refine reply held code; None before the first."""
    drafts = _drafting(state)
    return bool((drafts[-1].code or "").strip()) if drafts else None


def _last_judge(state: dict) -> Step | None:
    judged = [s for s in steps_of(state) if s.verdict is not None]
    return judged[-1] if judged else None


def critique(state: dict) -> str | None:
    """The last judge's text (the critic's, or a gate's): what the refiner reads."""
    last = _last_judge(state)
    return last.reply if last else None


def critique_status(state: dict) -> _CritiqueStatus | None:
    """The last judge's verdict as a status: accepted, needs_revision or invalid (it decided nothing)."""
    last = _last_judge(state)
    if last is None:
        return None
    return _STATUS[last.verdict.accepted]


def critic_step(
    index: int,
    status: _CritiqueStatus,
    text: str,
    score: float | None = None,
    usage: tuple[int, int, int] = (0, 0, 0),
    role: str = "critic",
) -> Step:
    """A critique as a step: its status as a `Verdict` (accepted, needs_revision or invalid, with the
    score), its text as the reply; a model step when the critic called a model, else a check (a
    judge that runs code, such as lesson 04's test gate with `role="tests"`)."""
    prompt, completion, calls = usage
    verdict = Verdict(
        status + ("" if score is None else f" (score {score:g})"),
        _ACCEPTS[status],
        score,
        reason=text if status == "invalid" else "",
    )
    return Step(
        index, role, "model" if calls else "check", "", text, prompt, completion, 0.0, verdict
    )


def normalise(ev: Evaluation, threshold: float) -> tuple[_CritiqueStatus, str, str | None]:
    """(status, critique text, raw output) from a critic's Evaluation.

    A sentinel reply (APPROVED, CODE_IS_PERFECT, read strictly as in lesson 02) accepts; a
    JSON score at or above `threshold` accepts, below asks for changes; no usable score is
    invalid, and so is a reply that says both (a sentinel and a score below the threshold)."""
    raw = ev.raw
    sentinel = bool(raw) and any(strict_sentinel(raw, s) for s in _SENTINELS)
    if sentinel and ev.score is not None and ev.score < threshold:
        return "invalid", f"contradictory critique: a sentinel and a score of {ev.score:g}", raw
    if sentinel:
        return "accepted", ev.feedback if ev.score is not None else "approved (sentinel)", raw
    if ev.score is None:
        return "invalid", ev.feedback, raw
    return ("accepted" if ev.score >= threshold else "needs_revision"), ev.feedback, raw


_THREADS = itertools.count(1)


def fresh_thread(prefix: str = "run") -> str:
    """A thread id no earlier run in this process used ("factorial-1", "factorial-2", ...)."""
    return f"{prefix}-{next(_THREADS)}"


def start_state(text: str, max_iterations: int = 3, requirements: list[str] | None = None) -> dict:
    """The input state for one run."""
    return {
        "input": text,
        "max_iterations": max_iterations,
        "requirements": list(requirements or []),
        "metadata": {},
        "steps": [],
        "errors": [],
    }


def run_config(max_iterations: int, thread_id: str | None = None) -> dict:
    """The config for one run: an explicit recursion limit (a second guard), and a thread id."""
    config: dict = {"recursion_limit": 2 * max_iterations + 6}
    if thread_id:
        config["configurable"] = {"thread_id": thread_id}
    return config
