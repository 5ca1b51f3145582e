"""Best-of-k: k drafts of the task, one chosen by evidence the producer may see.

The rival every reflection strategy has to beat at the same cost (lesson 06), and the part the
repair strategies are built from. Three settings make the variants:

- `first`: "sample" (every draft is a fresh sample of the plain task at `temperature`, with its
  own seed: seed + 1, seed + 2, ..., the same requests as Reflexion's first attempt and its `none`
  mode, so `CachedChat` lets the two share them) or "draft" (the first is the course's one first
  draft, one-shot's request at temperature 0; the k - 1 after it are samples, seeds seed + 1 on).
- `feedback`: what each sample after the first sees besides the task. "none": nothing (blind
  resampling). "failure": the checks the first draft failed (each assert and what the draft
  returned or raised), never its code. "failure+code": the failed checks and the first draft's
  code (the self-repair tree of Olausson et al., ICLR 2024, with k - 1 repairs of one draft).
  A sample with feedback is asked only when the first draft failed its evidence.
- `select`: the evidence that chooses (and, with `stop_on_pass`, stops): "self-tests" (asserts
  the model writes from the statement, lesson 05), "examples" (the statement's own examples; a
  statement without any gives no evidence), "examples-or-self-tests" (the examples where the
  statement has some, else the agent's own tests), or "first" (no evidence: always draft 1).

The draft that passes the most asserts wins, the earliest on a tie (`judging.controller.best_index`).
With `stop_on_pass`, the loop stops at the first draft that passes every assert (accepted), or
after k drafts, and after the first draft when there is no evidence (nothing could pass or fail);
without it all k are drawn, which pass@k's unbiased estimator needs (reflect.evaluation.report).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..judging.controller import best_index
from ..judging.self_tests import SelfTestResult, evidence_step, run_tests_step
from ..model.llm import ModelError
from ..model.sampling import SAMPLING, SEED, sampling
from ..records import Run, Step, Stop, model_step
from ..tasks.extract import extract_code
from ..tasks.prompts import GENERATOR_PROMPT, WRITE_TESTS_SYSTEM, generator_messages, repair_request
from ..tasks.task import Task
from .base import Configured, execute

SELECT = ("self-tests", "examples", "examples-or-self-tests", "first")
FIRST = ("sample", "draft")
FEEDBACK = ("none", "failure", "failure+code")


@dataclass
class Resample(Configured):
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
    ROLES = (
        "test_writer",
    )  # the samples' temperature is a field; a first "draft" is sampled as one-shot's

    def prompts(self) -> tuple[str, ...]:
        """The generator's prompt (every draft) and the test writer's."""
        return GENERATOR_PROMPT, WRITE_TESTS_SYSTEM

    def __post_init__(self):
        for setting, value, allowed in (
            ("select", self.select, SELECT),
            ("first", self.first, FIRST),
            ("feedback", self.feedback, FEEDBACK),
        ):
            if value not in allowed:
                raise ValueError(f"{setting} must be one of {allowed}, got {value!r}")
        if self.k < 1:
            raise ValueError(f"k must be at least 1, got {self.k}")
        if self.feedback != "none" and (self.select == "first" or not self.stop_on_pass):
            raise ValueError(
                "feedback needs evidence and stop_on_pass: samples are shown the first draft's failed checks"
            )

    def run(self, task: Task, chat: Callable) -> Run:
        """Draw up to k drafts and keep the one with the most evidence asserts passed."""
        return execute(self, task, lambda: self._sample(task, chat))

    def _request(
        self, task: Task, i: int, shown: tuple[str, SelfTestResult] | None
    ) -> tuple[list[dict], dict]:
        """Draft i's messages and sampling: the first draft, a blind sample, or a sample shown the failure."""
        if i == 1 and self.first == "draft":
            return generator_messages(task.prompt()), sampling(
                "generator", self.seed
            )  # one-shot's request
        prompt = task.prompt()
        if shown is not None and self.feedback != "none":
            code, result = shown
            prompt = repair_request(
                task, result.failed, code if self.feedback == "failure+code" else None
            )
        return generator_messages(prompt), {
            "temperature": self.temperature,
            "seed": self.seed + i - (self.first == "draft"),
        }

    def _sample(self, task: Task, chat: Callable) -> Run:
        steps: list[Step] = []
        drafts: list[tuple[int, str]] = []  # (asserts passed, code) of each draft, in order
        stop, error = Stop.MAX_ITERATIONS, None  # all k drafts made
        # the first draft and its result, once it failed
        shown: tuple[str, SelfTestResult] | None = None
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
                if i == 1 and result is not None:
                    shown = (code, result)
                if self.stop_on_pass and not asserts:
                    stop = Stop.SINGLE_DRAFT  # no evidence: nothing could pass or fail
                    break
                if self.stop_on_pass and score == len(asserts):  # every assert passed
                    stop = Stop.ACCEPTED
                    break
        except ModelError as err:
            stop, error = Stop.PROVIDER_ERROR, str(err)
        i = best_index(
            [score for score, _ in drafts]
        )  # the most asserts passed, the earliest on a tie
        if i is None:
            return Run(self.name, task.id, "", stop, tuple(steps), "no draft", error=error)
        kind = "draft" if self.first == "draft" else "sample"
        why = (
            f"{drafts[i][0]}/{len(asserts)} of its {self.select} passed, the most (earliest on a tie)"
            if asserts
            else f"no evidence to choose by: the first {kind}"
        )
        return Run(
            self.name,
            task.id,
            drafts[i][1],
            stop,
            tuple(steps),
            f"{kind} {i + 1}: {why}",
            error=error,
        )
