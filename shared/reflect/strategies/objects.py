"""The lessons' strategies as `Strategy` objects: `run(task, chat) -> Run`, one record shape.

Each wraps the loop a lesson writes (lesson 01's one-shot, lesson 02's maker-checker,
lesson 03's scored reflection) without changing a single request it sends (the sampling a
lesson states, temperature, seed and token cap, is a field of the object), and turns its
result into a `Run` (reflect.records): the same fields for every strategy, so runs can be
compared, printed and stored side by side; the loop functions a lesson calls directly
(`maker_checker`, `scored_reflection`) return the same `Run`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..judging.controller import StopRule
from ..judging.critics import EvidenceCritic, LLMCritic
from ..model.sampling import SAMPLING, SEED
from ..records import ChatFn, Critic, Run, Stop, model_step
from ..tasks import prompts
from ..tasks.prompts import GENERATOR_PROMPT
from ..tasks.task import Task
from .base import Configured, execute
from .maker_checker import maker_checker
from .one_shot import one_shot_call
from .scored import scored_reflection


def with_sampling(
    chat: ChatFn, temperature: float, seed: int | None, max_tokens: Callable[[str], int]
) -> ChatFn:
    """`chat` with a lesson's stated sampling added to every call (a call's own keywords win):
    without it a server applies its own defaults, and llama.cpp's samples (temperature 0.8, a
    random seed), so the same request gives another answer each time."""

    def sampled(messages: list[dict], role: str = "generator", **params):
        fixed = {
            "temperature": temperature,
            "max_tokens": max_tokens(role),
            **({} if seed is None else {"seed": seed}),
        }
        return chat(messages, role=role, **{**fixed, **params})

    return sampled


@dataclass
class OneShot(Configured):
    """Lesson 01: one generator call, no critic, sampled as every first draft is (temperature 0,
    seed 42, 512 tokens: `reflect.model.sampling`)."""

    system_prompt: str = GENERATOR_PROMPT
    temperature: float = SAMPLING["generator"]["temperature"]
    seed: int | None = SEED
    max_tokens: int = SAMPLING["generator"]["max_tokens"]
    judge_hidden: bool = True  # fill Run.passed from the hidden tests
    name: str = "one-shot"
    ROLES = ("generator",)  # its prompt is a field

    def run(self, task: Task, chat: ChatFn) -> Run:
        """One call; the draft is final."""
        sampled = with_sampling(chat, self.temperature, self.seed, lambda role: self.max_tokens)

        def body() -> Run:
            messages, reply, code = one_shot_call(sampled, task, self.system_prompt)
            return Run(
                self.name,
                task.id,
                code,
                Stop.SINGLE_DRAFT,
                (model_step(0, "generator", messages, reply, code),),
                "the only draft",
            )

        return execute(self, task, body)


@dataclass
class MakerChecker(Configured):
    """Lesson 02: generator and reviewer on one shared thread until APPROVED or the budget, sampled
    as lesson 02 does (temperature 0, seed 42; the generator may write 512 tokens, the reviewer 300)."""

    max_iterations: int = 4
    options: dict = field(default_factory=dict)  # any other keyword of maker_checker()
    temperature: float = SAMPLING["generator"][
        "temperature"
    ]  # the reviewer's too (SAMPLING["reviewer"])
    seed: int | None = SEED
    generator_max_tokens: int = SAMPLING["generator"]["max_tokens"]
    reviewer_max_tokens: int = SAMPLING["reviewer"]["max_tokens"]
    judge_hidden: bool = True
    name: str = "maker-checker"
    ROLES = ("generator", "reviewer")

    def prompts(self) -> tuple[str, ...]:
        """Lesson 02's generator and reviewer prompts."""
        return prompts.GENERATOR_PROMPT, prompts.REVIEWER_PROMPT

    def run(self, task: Task, chat: ChatFn) -> Run:
        """Run the loop on the task's prompt and return its Run."""
        sampled = with_sampling(
            chat,
            self.temperature,
            self.seed,
            lambda role: (
                self.generator_max_tokens if role == "generator" else self.reviewer_max_tokens
            ),
        )
        return execute(
            self,
            task,
            lambda: maker_checker(
                sampled,
                task.prompt(),
                max_iterations=self.max_iterations,
                entry_point=task.entry_point,
                **self.options,
                task_id=task.id,
                name=self.name,
            ),
        )


@dataclass
class ScoredReflection(Configured):
    """Lesson 03: generator, critic, refiner with a stop rule; returns the best draft."""

    critic: Critic | str  # a critic, or its name (CRITIC_KINDS), built from the run's chat
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


CRITIC_KINDS = ("llm", "examples", "self-tests")


def make_critic(kind: str, chat: ChatFn) -> Critic:
    """A new critic by name, bound to `chat`: "llm" (lesson 03's JSON critic, capped at 400 tokens), "examples" (the
    statement's own examples) or "self-tests" (asserts the model writes, lesson 05). Naming the
    critic instead of passing one keeps a strategy's `config()` stable, so a results file can resume."""
    if kind == "llm":
        return LLMCritic(
            chat, max_tokens=400
        )  # a cap, as for lesson 05's evaluator: a cut-off reply is a parse failure
    if kind in ("examples", "self-tests"):
        return EvidenceCritic(chat, source=kind)
    raise ValueError(f"critic must be one of {CRITIC_KINDS}, got {kind!r}")
