"""Best-of-k: k drafts of the task, one chosen by evidence the producer may see, the rival every reflection
strategy has to beat at the same cost (lesson 06). `first`, `feedback` and `select` make the variants
(docs/package.md, "The modules in detail").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ..judging.controller import best_index
from ..judging.critics import LLMCritic
from ..judging.self_tests import SelfTestResult, evidence_step, run_tests_step
from ..model.llm import ModelError
from ..model.roles import SAMPLING, SEED, sampling
from ..records import KEYED_WHEN_SET, Run, Step, Stop, model_step
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
from .base import execute

SELECT = ("self-tests", "examples", "examples-or-self-tests", "first")
_FIRST = ("sample", "draft")
_FEEDBACK = ("none", "failure", "failure+code", "critique+code")
_CRITIC_MAX_TOKENS = 400  # the critique's cap, as lesson 03's scored loop caps its critic


@dataclass
class Resample:
    """k drafts; the evidence picks one (see the module docstring)."""

    k: int = 4
    temperature: float = SAMPLING["sampler"]["temperature"]
    select: str = "self-tests"
    stop_on_pass: bool = False
    seed: int = SEED
    first: str = "sample"
    feedback: str = "none"
    judge_hidden: bool = True
    name: str = "resample"
    replicate: int = field(default=0, metadata={KEYED_WHEN_SET: True})
    sample_tokens: int | None = field(default=None, metadata={KEYED_WHEN_SET: True})
    # the samples' temperature is a field; a first "draft" is sampled as one-shot's
    ROLES = ("test_writer",)

    def prompts(self) -> tuple[str, ...]:
        """The generator's prompt (every draft), the test writer's, and the critic's when it critiques."""
        critic = (CRITIC_PROMPT,) if self.feedback == "critique+code" else ()
        return GENERATOR_PROMPT, WRITE_TESTS_SYSTEM, *critic

    def __post_init__(self):
        for setting, value, allowed in (
            ("select", self.select, SELECT),
            ("first", self.first, _FIRST),
            ("feedback", self.feedback, _FEEDBACK),
        ):
            if value not in allowed:
                raise ValueError(f"{setting} must be one of {allowed}, got {value!r}")
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        if self.replicate < 0:
            raise ValueError(f"replicate must be 0 or more, got {self.replicate}")
        if self.feedback != "none" and (self.select == "first" or not self.stop_on_pass):
            raise ValueError(
                "feedback needs evidence and stop_on_pass: samples are shown the first draft's failed checks"
            )

    def run(self, task: Task, chat: Callable) -> Run:
        """Draw up to k drafts and keep the one with the most evidence asserts passed."""
        return execute(self, task, lambda: self._sample(task, chat))

    def _request(
        self, task: Task, i: int, shown: tuple[str, SelfTestResult, str] | None
    ) -> tuple[list[dict], dict]:
        """Draft i's messages and sampling: the first draft, a blind sample, or a sample shown the failure."""
        if i == 1 and self.first == "draft":
            return generator_messages(task.prompt()), sampling("generator", self.seed)  # one-shot's
        prompt = task.prompt()
        if shown is not None and self.feedback == "critique+code":
            prompt = critique_request(task, shown[0], shown[2])
        elif shown is not None and self.feedback != "none":
            code, result, _ = shown
            prompt = repair_request(
                task, result.failed, code if self.feedback == "failure+code" else None
            )
        cap = {} if self.sample_tokens is None else {"max_tokens": self.sample_tokens}
        seed = self.seed + 100 * self.replicate + i - (self.first == "draft")
        return generator_messages(prompt), {"temperature": self.temperature, **cap, "seed": seed}

    def _critique(self, task: Task, code: str, chat: Callable, steps: list[Step]) -> str:
        """Lesson 03's JSON critic on the failed first draft, its call(s) kept as steps of the run."""

        def kept(messages: list[dict], role: str = "critic", **params):
            answer = chat(messages, role=role, **params)
            steps.append(model_step(len(steps), role, messages, answer))
            return answer

        before = len(steps)
        evaluation = LLMCritic(kept, max_tokens=_CRITIC_MAX_TOKENS).evaluate(task, code)
        note = "critique, " + (
            "unusable" if evaluation.score is None else f"score {evaluation.score:g}"
        )
        steps[before:] = [replace(s, note=note) for s in steps[before:]]
        return evaluation.feedback

    def _sample(self, task: Task, chat: Callable) -> Run:
        steps: list[Step] = []
        drafts: list[tuple[int, str]] = []  # (asserts passed, code) of each draft, in order
        stop, error = Stop.MAX_ITERATIONS, None  # all k drafts made
        # the first draft, its result and (critique+code) its critique, once it failed
        shown: tuple[str, SelfTestResult, str] | None = None
        try:
            asserts = (
                []
                if self.select == "first"
                else evidence_step(chat, task, self.select, self.seed, steps)
            )
            for i in range(1, self.k + 1):
                messages, params = self._request(task, i, shown)
                reply = chat(messages, role="generator", **params)
                code = extract_code(reply.text, task.entry_point).code
                steps.append(model_step(len(steps), "generator", messages, reply, code=code))
                score, result = 0, None
                if asserts:
                    result, step = run_tests_step(len(steps), task, code, asserts)
                    steps.append(step)
                    score = len(result.passed)
                drafts.append((score, code))
                if i == 1 and result is not None and result.failed:
                    critique = (
                        self._critique(task, code, chat, steps)
                        if self.feedback == "critique+code"  # with k=1 made, and shown to no sample
                        else ""
                    )
                    shown = (code, result, critique)
                if self.stop_on_pass and not asserts:
                    stop = Stop.SINGLE_DRAFT  # no evidence: nothing could pass or fail
                    break
                if self.stop_on_pass and score == len(asserts):  # every assert passed
                    stop = Stop.ACCEPTED
                    break
        except ModelError as err:
            stop, error = Stop.PROVIDER_ERROR, str(err)
        # the most asserts passed, the earliest on a tie
        i = best_index([score for score, _ in drafts])
        made = dict(strategy=self.name, task_id=task.id, stop=stop, steps=tuple(steps), error=error)
        if i is None:
            return Run(**made, final_code="", chosen="no draft")
        kind = "draft" if self.first == "draft" else "sample"
        why = (
            f"{drafts[i][0]}/{len(asserts)} of its {self.select} passed, the most (earliest on a tie)"
            if asserts
            else f"no evidence to choose by: the first {kind}"
        )
        return Run(**made, final_code=drafts[i][1], chosen=f"{kind} {i + 1}: {why}")
