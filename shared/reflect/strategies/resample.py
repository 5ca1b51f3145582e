"""Resampling: k fresh samples of the plain task, one chosen by evidence the producer may see.

The rival every reflection strategy has to beat at the same cost (lesson 06): on the course's
failing drafts, fresh attempts were the only thing that ever fixed one. No feedback reaches the
model. Each sample is a fresh generation of the task at `temperature` with its own seed
(seed + 1, seed + 2, ...: the same requests as Reflexion's first attempt and its `none` mode,
so `CachedChat` lets the two share them).

The evidence only *chooses*: the sample that passes the most asserts wins, the earliest on a
tie. `select` names the evidence: "self-tests" (asserts the model writes from the statement,
lesson 05), "examples" (the statement's own examples; a statement without any gives no
evidence, and then the first sample is kept), or "first" (no evidence: always sample 1).
With `stop_on_pass`, sampling stops at the first sample that passes every assert; without
it all k are drawn, which pass@k's unbiased estimator needs (reflect.evaluation.report).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..judging.controller import best_index
from ..judging.self_tests import (
    WRITE_TESTS_SYSTEM,
    run_tests_step,
    statement_asserts,
    write_tests_step,
)
from ..model.llm import ModelError
from ..model.sampling import SAMPLING
from ..records import Run, Step, Stop, model_step
from ..tasks.extract import extract_code
from ..tasks.task import Task
from .base import Configured, execute
from .maker_checker import GENERATOR_PROMPT, generator_messages

SELECT = ("self-tests", "examples", "first")


@dataclass
class Resample(Configured):
    """k independent samples; the evidence picks one (see the module docstring)."""

    k: int = 4
    temperature: float = SAMPLING["sampler"]["temperature"]
    select: str = "self-tests"
    stop_on_pass: bool = False
    seed: int = 42
    judge_hidden: bool = True
    name: str = "resample"
    ROLES = ("test_writer",)  # the samples' temperature is a field

    def prompts(self) -> tuple[str, ...]:
        """The generator's prompt (every sample) and the test writer's."""
        return GENERATOR_PROMPT, WRITE_TESTS_SYSTEM

    def __post_init__(self):
        if self.select not in SELECT:
            raise ValueError(f"select must be one of {SELECT}, got {self.select!r}")
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")

    def run(self, task: Task, chat: Callable) -> Run:
        """Draw up to k samples and keep the one with the most evidence asserts passed."""
        return execute(self, task, lambda: self._sample(task, chat))

    def _evidence(self, task: Task, chat: Callable, steps: list[Step]) -> list[str]:
        if self.select == "examples":
            return statement_asserts(task)
        if self.select == "first":
            return []
        asserts, step = write_tests_step(chat, task, self.seed, len(steps))
        steps.append(step)
        return asserts

    def _sample(self, task: Task, chat: Callable) -> Run:
        steps: list[Step] = []
        samples: list[tuple[int, str]] = []  # (asserts passed, code) of each sample, in order
        stop, error = Stop.MAX_ITERATIONS, None  # all k samples drawn
        try:
            asserts = self._evidence(task, chat, steps)
            messages = generator_messages(task.prompt())
            for i in range(1, self.k + 1):
                reply = chat(messages, role="generator", temperature=self.temperature, seed=self.seed + i)
                code = extract_code(reply.text, task.entry_point).code
                steps.append(model_step(len(steps), "generator", messages, reply, code=code))
                if asserts:
                    res, step = run_tests_step(len(steps), task, code, asserts)
                    steps.append(step)
                    score = len(res.passed)
                else:
                    score = 0
                samples.append((score, code))
                if asserts and score == len(asserts) and self.stop_on_pass:
                    stop = Stop.ACCEPTED
                    break
        except ModelError as err:
            stop, error = Stop.PROVIDER_ERROR, str(err)
        i = best_index([score for score, _ in samples])  # the most asserts passed, the earliest on a tie
        if i is None:
            return Run(self.name, task.id, "", stop, tuple(steps), "no draft", error=error)
        why = (f"{samples[i][0]}/{len(asserts)} of its {self.select} passed, the most (earliest on a tie)" if asserts
               else "no evidence to choose by: the first sample")
        return Run(self.name, task.id, samples[i][1], stop, tuple(steps), f"sample {i + 1}: {why}", error=error)
