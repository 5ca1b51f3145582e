"""Lesson 06's experiment: after a failed first draft, does feedback beat more tries?

Four arms that differ in one thing, what a sample drawn after a failed first draft sees besides the task:

- `feedback:blind`: the task only. Resampling, with the same first draft, evidence and stop rule.
- `feedback:checks`: the task and the checks the first draft failed (each assert and what the draft
  returned or raised), never its code.
- `feedback:checks+code`: the task, the first draft's code and its failed checks (Olausson et al.'s
  self-repair: repairs of one draft).
- `feedback:critique`: the task, the first draft's code and a critique the model wrote of it (lesson 03's
  JSON critic, no execution): the classic self-reflection. The critique's call is counted.

Everything else is shared by construction, not by a cache: `first_draft` makes, once per problem, the one
first draft (one-shot's request: temperature 0, seed 42, 512 tokens), the evidence (the statement's
examples where it has any, else one set of the agent's own tests, `judging.self_tests`), the draft's run on
that evidence and, when it failed, the critique. `after_failure` takes that `Start` and, for one arm and
one replicate, draws up to `SAMPLES_AFTER` samples with the same sampling in every arm (temperature 0.6,
512 tokens) and the same seed for sample j of replicate r (`seed_of`). It stops at the first sample whose
code passes every assert of the evidence; without one, the draft that passed the most asserts is returned,
the earliest on a tie (the first draft included). A first draft that passed its evidence, or a problem
with no evidence, makes no sample in any arm: the arms can differ only after a failed first draft.

Every run is the course's one record, a `Run` whose steps begin with the shared ones (the test writer's
call if there was one, the first draft, its check), so its tokens count every call the arm made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from ..judging.controller import best_index
from ..judging.critics import LLMCritic
from ..judging.self_tests import evidence_step, run_tests_step, statement_asserts
from ..model.llm import ModelError
from ..model.sampling import SAMPLING, SEED, sampling
from ..records import Run, Step, Stop, model_step
from ..tasks.extract import extract_code
from ..tasks.prompts import (
    CRITIC_PROMPT,
    GENERATOR_PROMPT,
    WRITE_TESTS_SYSTEM,
    critique_request,
    generator_messages,
    repair_request,
)
from ..tasks.task import Task
from .base import fingerprint

BLIND, CHECKS, CHECKS_CODE, CRITIQUE = (
    "feedback:blind",
    "feedback:checks",
    "feedback:checks+code",
    "feedback:critique",
)
ARMS = (BLIND, CHECKS, CHECKS_CODE, CRITIQUE)
SAMPLES_AFTER = 4  # samples after a failed first draft, at most, in every arm
SAMPLE = {
    "temperature": SAMPLING["sampler"]["temperature"],
    "max_tokens": SAMPLING["generator"]["max_tokens"],
}
CRITIC_MAX_TOKENS = 400  # lesson 03's scored loop caps its critic the same way
EVIDENCE = "examples-or-self-tests"


def seed_of(replicate: int, j: int) -> int:
    """The seed of sample `j` (1, 2, ...) of replicate `replicate` (0, 1, ...), the same in every arm:
    43-46 for replicate 0, 143-146 for replicate 1, ..."""
    if replicate < 0 or not 1 <= j <= 99:
        raise ValueError(f"replicate must be 0 or more and j 1 to 99, got {replicate}, {j}")
    return SEED + 100 * replicate + j


@dataclass(frozen=True)
class Start:
    """What every arm shares on one problem: the first draft, the evidence, the draft's result on it,
    and (after a failed first draft) the critique, with the steps that made them."""

    task_id: str
    code: str  # the first draft
    source: str  # "examples" (the statement's) or "self-tests" (the agent's own, written once)
    asserts: tuple[str, ...]
    failed: tuple[
        tuple[str, str], ...
    ]  # the asserts the first draft failed, each with what it gave
    steps: tuple[Step, ...]  # the test writer's call (if any), the first draft's call, its check
    critique: str = ""  # the critic's feedback on a failed first draft
    critique_steps: tuple[Step, ...] = ()  # the critic's call(s)

    @property
    def needs_samples(self) -> bool:
        """True when the first draft failed evidence that exists: only then do the arms draw samples."""
        return bool(self.asserts) and bool(self.failed)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        from dataclasses import asdict

        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Start:
        """The inverse of `to_dict`."""
        return cls(
            data["task_id"],
            data["code"],
            data["source"],
            tuple(data["asserts"]),
            tuple(tuple(f) for f in data["failed"]),
            tuple(Step.from_dict(s) for s in data["steps"]),
            data.get("critique", ""),
            tuple(Step.from_dict(s) for s in data.get("critique_steps", ())),
        )


def first_draft(task: Task, chat: Callable, seed: int = SEED) -> Start:
    """The one first draft of `task`, its evidence and its check, and the critique when it failed."""
    steps: list[Step] = []
    asserts = evidence_step(chat, task, EVIDENCE, seed, steps)
    source = "examples" if statement_asserts(task) else "self-tests"
    messages = generator_messages(task.prompt())
    reply = chat(messages, role="generator", **sampling("generator", seed))  # one-shot's request
    code = extract_code(reply.text, task.entry_point).code
    steps.append(model_step(len(steps), "generator", messages, reply, code=code))
    failed: tuple[tuple[str, str], ...] = ()
    if asserts:
        result, check = run_tests_step(len(steps), task, code, asserts)
        steps.append(check)
        failed = tuple(result.failed)
    start = Start(task.id, code, source, tuple(asserts), failed, tuple(steps))
    if not start.needs_samples:
        return start
    critic_steps: list[Step] = []

    def recorded(msgs: list[dict], role: str = "critic", **params):
        answer = chat(msgs, role=role, **params)
        critic_steps.append(model_step(0, role, msgs, answer))
        return answer

    evaluation = LLMCritic(recorded, max_tokens=CRITIC_MAX_TOKENS).evaluate(task, code)
    score = "unusable" if evaluation.score is None else f"score {evaluation.score:g}"
    critic_steps = [replace(s, note=f"critique, {score}") for s in critic_steps]
    return replace(start, critique=evaluation.feedback, critique_steps=tuple(critic_steps))


def sample_request(task: Task, arm: str, start: Start) -> str:
    """What a sample after the failed first draft is asked, in `arm`."""
    if arm == BLIND:
        return task.prompt()
    if arm == CHECKS:
        return repair_request(task, list(start.failed))
    if arm == CHECKS_CODE:
        return repair_request(task, list(start.failed), start.code)
    if arm == CRITIQUE:
        return critique_request(task, start.code, start.critique)
    raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")


def after_failure(
    task: Task, start: Start, arm: str, replicate: int, chat: Callable, samples: int = SAMPLES_AFTER
) -> Run:
    """One arm's run on one problem, replicate `replicate`: the shared start, then (after a failed
    first draft) up to `samples` samples until one passes the evidence."""
    if arm not in ARMS:
        raise ValueError(f"arm must be one of {ARMS}, got {arm!r}")
    steps = list(start.steps) + (
        list(start.critique_steps) if arm == CRITIQUE and start.needs_samples else []
    )
    total = len(start.asserts)
    scores = [total - len(start.failed)]
    codes = [start.code]
    stop, error = (Stop.ACCEPTED if start.asserts else Stop.SINGLE_DRAFT), None
    if start.needs_samples:
        stop = Stop.MAX_ITERATIONS
        try:
            for j in range(1, samples + 1):
                messages = generator_messages(sample_request(task, arm, start))
                reply = chat(messages, role="generator", **SAMPLE, seed=seed_of(replicate, j))
                code = extract_code(reply.text, task.entry_point).code
                steps.append(
                    model_step(0, "generator", messages, reply, code=code, note=f"sample {j}")
                )
                result, check = run_tests_step(0, task, code, list(start.asserts))
                steps.append(check)
                scores.append(len(result.passed))
                codes.append(code)
                if len(result.passed) == total:
                    stop = Stop.ACCEPTED
                    break
        except ModelError as err:
            stop, error = Stop.PROVIDER_ERROR, str(err)
    i = best_index(scores)
    why = (
        f"{scores[i]}/{total} of its {start.source} passed"
        + ("" if stop is Stop.ACCEPTED else ", the most (earliest on a tie)")
        if total
        else "no evidence: the first draft"
    )
    steps = [replace(s, index=n) for n, s in enumerate(steps)]
    return Run(arm, task.id, codes[i], stop, tuple(steps), f"draft {i + 1}: {why}", error=error)


def one_shot_of(start: Start) -> Run:
    """The one-shot baseline on the same problem: the shared first draft alone (its call only)."""
    (call,) = [s for s in start.steps if s.role == "generator"]
    return Run(
        "one-shot",
        start.task_id,
        start.code,
        Stop.SINGLE_DRAFT,
        (replace(call, index=0),),
        "draft 1: the only one",
    )


def experiment_config() -> dict[str, Any]:
    """What identifies the experiment's setup in its results file: the arms, the sampling of every
    role, the cap on samples, and a fingerprint of every prompt (the fixed ones and each arm's request
    for a stand-in problem, so a reworded request is a new setup)."""
    from ..tasks.task import get_task

    probe = get_task("HumanEval/0")
    stand_in = Start(
        probe.id,
        "def f():\n    pass\n",
        "examples",
        ("assert f() == 1",),
        (("assert f() == 1", "None"),),
        (),
        critique="Score 2/10.",
    )
    requests = tuple(sample_request(probe, arm, stand_in) for arm in ARMS)
    return {
        "experiment": "feedback",
        "arms": list(ARMS),
        "evidence": EVIDENCE,
        "samples_after": SAMPLES_AFTER,
        "first": sampling("generator"),
        "sample": dict(SAMPLE),
        "seeds": "42 + 100 * replicate + j",
        "test_writer": dict(SAMPLING["test_writer"]),
        "critic": {**SAMPLING["critic"], "max_tokens": CRITIC_MAX_TOKENS},
        "prompts": fingerprint((GENERATOR_PROMPT, WRITE_TESTS_SYSTEM, CRITIC_PROMPT, *requests)),
    }
