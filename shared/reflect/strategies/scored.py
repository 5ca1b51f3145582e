"""The scored reflection loop: generator, critic, refiner (each role's sampling: `reflect.model.roles`), with a
stop rule and best-so-far. The refiner gets the task, the previous attempt and the critic's feedback; the loop
returns the best attempt, not the last, and a regression stops it early.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from ..judging.controller import Draft, StopRule
from ..judging.critics import EvidenceCritic, LLMCritic
from ..model.llm import ModelError
from ..model.roles import SAMPLING, SEED
from ..records import ChatFn, Critic, Run, Step, Stop, Verdict, model_step
from ..tasks import prompts
from ..tasks.extract import extract_code
from ..tasks.prompts import GENERATOR_PROMPT, generator_messages, refine_messages
from ..tasks.task import Task
from .base import execute


def _draft_call(
    chat: Callable,
    task: Task,
    role: str,
    messages: list[dict],
    seed: int | None = SEED,
    sampling: Mapping[str, dict] = SAMPLING,
) -> Step:
    """One generator or refiner call at the role's sampling (`sampling[role]`, plus the seed), as
    its step, with the code extracted from the reply in `code`."""
    extra = {} if seed is None else {"seed": seed}
    reply = chat(messages, role=role, **sampling[role], **extra)
    return model_step(0, role, messages, reply, extract_code(reply.text, task.entry_point).code)


def generate_step(
    chat: Callable, task: Task, seed: int | None = SEED, sampling: Mapping[str, dict] = SAMPLING
) -> Step:
    """The first draft: the generator's system prompt and the task, sampled as every lesson's
    first draft is (with the default sampling and seed, the request of lesson 01's one-shot)."""
    messages = generator_messages(task.prompt(), GENERATOR_PROMPT)
    return _draft_call(chat, task, "generator", messages, seed, sampling)


def refine_step(
    chat: Callable,
    task: Task,
    previous: str,
    feedback: str,
    seed: int | None = SEED,
    sampling: Mapping[str, dict] = SAMPLING,
) -> Step:
    """A revision: the refiner sees the task, the previous draft and the critic's feedback."""
    return _draft_call(
        chat, task, "refiner", refine_messages(task, previous, feedback), seed, sampling
    )


def critique_step(critic, task: Task, code: str):
    """The critic's Evaluation of a draft (any object with `evaluate(task, code)`)."""
    return critic.evaluate(task, code)


def _critic_record(ev, rule: StopRule) -> Step:
    """The step a critique is recorded as: its score as a verdict (accepted at the rule's threshold), a
    model step when the critic called a model (a repaired critique counts its calls in the label)."""
    prompt, completion, calls = ev.usage
    label = ("unusable" if ev.score is None else f"score {ev.score:g}") + (
        f" ({calls} calls)" if calls > 1 else ""
    )
    verdict = Verdict(
        label, rule.accepts(ev.score), ev.score, reason=ev.feedback if ev.score is None else ""
    )
    kind = "model" if calls else "check"
    return Step(0, "critic", kind, "", ev.feedback, prompt, completion, 0.0, verdict)


def _chosen_text(best: Draft | None) -> str:
    """Which draft a scored loop returns, and why."""
    if best is None:
        return "no draft"
    return (
        f"the best score, {best.score:g}, at iteration {best.iteration}"
        if best.score is not None
        else f"iteration {best.iteration}, unscored"
    )


def scored_reflection(
    chat: Callable,
    task: Task,
    critic,
    rule: StopRule | None = None,
    seed: int | None = SEED,
    first_draft: str | None = None,
    sampling: Mapping[str, dict] = SAMPLING,
    name: str = "scored",
) -> Run:
    """Run generator -> critic -> refiner ... until `rule` says stop (`StopRule.decide`); the
    `Run` returns the best draft (`StopRule.choose`).

    `first_draft` starts from an existing draft (e.g. lesson 01's) instead of calling the
    generator, so several critics can be compared on the same first drafts: it is the run's first
    step, a given one (kind "input", no tokens)."""
    rule = rule or StopRule()
    # a first draft handed to the run: no call, no tokens
    given = Step(0, "given", "input", code=first_draft, note="the first draft, given")
    steps: list[Step] = [given] if first_draft is not None else []

    def end(stop: Stop, error: str | None = None) -> Run:
        best = rule.choose(rule.drafts(steps), stop)
        numbered = tuple(replace(s, index=i) for i, s in enumerate(steps))
        return Run(
            strategy=name,
            task_id=task.id,
            final_code=best.code if best else "",
            stop=stop,
            steps=numbered,
            chosen=_chosen_text(best),
            error=error,
        )

    try:
        if not steps:
            steps.append(generate_step(chat, task, seed, sampling))
        while True:  # bounded by the rule: it stops at max_iterations drafts at the latest
            verdict = critique_step(critic, task, steps[-1].code)
            steps.append(_critic_record(verdict, rule))
            if verdict.score is None and verdict.permanent:  # no evidence: revising cannot help
                return end(Stop.INVALID_CRITIC)
            stop = rule.decide(steps)
            if stop:
                return end(stop)
            last = rule.drafts(steps)[-1]
            steps.append(refine_step(chat, task, last.code, last.feedback, seed, sampling))
    except ModelError as err:
        return end(Stop.PROVIDER_ERROR, str(err))


@dataclass
class ScoredReflection:
    """Lesson 03: generator, critic, refiner with a stop rule; returns the best draft."""

    critic: Critic | str  # a critic, or its name (_CRITIC_KINDS), built from the run's chat
    rule: StopRule = field(default_factory=StopRule)
    seed: int | None = SEED
    sampling: dict = field(
        default_factory=lambda: {role: SAMPLING[role] for role in ("generator", "refiner")}
    )
    judge_hidden: bool = True
    name: str = "scored"
    ROLES = ("critic", "test_writer")  # the generator's and refiner's sampling is a field

    def prompts(self) -> tuple[str, ...]:
        """The generator's and refiner's prompts, lesson 03's critic's, and the test writer's (self-tests)."""
        return (
            prompts.GENERATOR_PROMPT,
            prompts.REFINER_SYSTEM,
            prompts.CRITIC_PROMPT,
            prompts.WRITE_TESTS_SYSTEM,
        )

    def run(self, task: Task, chat: ChatFn) -> Run:
        """Run the loop and return its Run."""
        critic = make_critic(self.critic, chat) if isinstance(self.critic, str) else self.critic

        return execute(
            self,
            task,
            lambda: scored_reflection(
                chat,
                task,
                critic,
                self.rule,
                seed=self.seed,
                sampling=self.sampling,
                name=self.name,
            ),
        )


_CRITIC_KINDS = ("llm", "examples", "self-tests")


def make_critic(kind: str, chat: ChatFn) -> Critic:
    """A new critic by name, bound to `chat`: "llm" (lesson 03's JSON critic, capped at 400 tokens), "examples" (the
    statement's own examples) or "self-tests" (asserts the model writes, lesson 05). Naming the
    critic instead of passing one keeps a strategy's `config_of` stable, so a results file can resume."""
    if kind == "llm":
        return LLMCritic(
            chat, max_tokens=400
        )  # a cap, as for lesson 05's evaluator: a cut-off reply is a parse failure
    if kind in ("examples", "self-tests"):
        return EvidenceCritic(chat, source=kind)
    raise ValueError(f"critic must be one of {_CRITIC_KINDS}, got {kind!r}")
