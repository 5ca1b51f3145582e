"""The scored reflection loop: generator, critic, refiner, with a stop rule and best-so-far.

Roles and sampling (`reflect.model.sampling`): the generator writes the course's one first
draft (temperature 0, seed 42, 512 tokens: the request of lesson 01's one-shot), the critic judges
at temperature 0, the refiner revises at 0.2. From the second
iteration on, the refiner gets the task, the previous attempt and the critic's feedback, and
is told to use the feedback rather than start over. The loop returns the best attempt, not
the last; a regression stops early and reverts to the best.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from ..judging.controller import ScoredAttempt, StopRule, best_so_far, chosen_index
from ..model.llm import ModelError
from ..model.sampling import SAMPLING, SEED
from ..records import Step, Stop, Verdict, model_step
from ..tasks.extract import extract_code
from ..tasks.task import Task
from .maker_checker import GENERATOR_PROMPT, generator_messages

STOPS = {"threshold": Stop.ACCEPTED, "max_iterations": Stop.MAX_ITERATIONS, "converged": Stop.CONVERGED,
         "oscillation": Stop.OSCILLATING, "regression": Stop.REGRESSED, "provider_error": Stop.PROVIDER_ERROR,
         "invalid_critic": Stop.INVALID_CRITIC}  # a stop rule's reason as the run's `Stop`
REFINER_SYSTEM = (
    "You are an expert Python developer improving your previous attempt. Use the critic's feedback: fix each "
    "issue it names, keep what already works, and do not start over. Output only the full improved code, in one Python code block."
)


@dataclass
class ScoredResult:
    """A scored loop's outcome: the best attempt, every attempt, and why it stopped.

    `best` is never None: when a provider error came before any draft, it is an empty
    attempt (iteration 0, no score) whose feedback names the error. `steps` are the run's records,
    in order: each attempt's call and critique (`ScoredAttempt.steps`), numbered."""

    task_id: str
    best: ScoredAttempt
    history: list[ScoredAttempt] = field(default_factory=list)
    stop_reason: str = ""  # threshold | max_iterations | converged | oscillation | regression | provider_error | invalid_critic
    error: str | None = None
    rule: StopRule = field(default_factory=StopRule)  # the rule that stopped it, whose threshold accepts a score

    @property
    def tokens(self) -> int:
        """Tokens of every attempt, critic included."""
        return sum(a.tokens for a in self.history)

    @property
    def steps(self) -> tuple[Step, ...]:
        """Every attempt's steps, numbered in order."""
        return tuple(replace(s, index=i) for i, s in enumerate(s for a in self.history for s in a.steps))

    @property
    def stop(self) -> Stop:
        """The stop reason as a `Stop`; a loop in which no critique was ever usable stopped on an invalid critic."""
        stop = STOPS[self.stop_reason]
        if stop is not Stop.PROVIDER_ERROR and self.history and all(a.score is None for a in self.history):
            return Stop.INVALID_CRITIC  # whatever rule fired, no usable critique ever came back
        return stop

    @property
    def chosen(self) -> str:
        """Which draft is returned, and why."""
        best = self.best
        return (f"the best score, {best.score:g}, at iteration {best.iteration}" if best.score is not None
                else f"iteration {best.iteration}, unscored" if best.iteration else "no draft")


def refine_request(task: Task, previous: str, feedback: str) -> str:
    """The refiner's user message: the task, the previous attempt and the critic's feedback."""
    return (f"Task:\n{task.prompt()}\n\nYour previous attempt:\n```python\n{previous}```\n\n"
            f"Critic feedback:\n{feedback}\n\nImprove the previous attempt using this feedback; do not start over.")


def draft_call(chat: Callable, task: Task, role: str, messages: list[dict], seed: int | None = SEED,
               sampling: Mapping[str, dict] = SAMPLING) -> Step:
    """One generator or refiner call at the role's sampling (`sampling[role]`, plus the seed), as
    its step, with the code extracted from the reply in `code`."""
    extra = {} if seed is None else {"seed": seed}
    reply = chat(messages, role=role, **sampling[role], **extra)
    return model_step(0, role, messages, reply, extract_code(reply.text, task.entry_point).code)


def generate_step(chat: Callable, task: Task, seed: int | None = SEED, sampling: Mapping[str, dict] = SAMPLING) -> Step:
    """The first draft: the generator's system prompt and the task, sampled as every lesson's
    first draft is (with the default sampling and seed, the request of lesson 01's one-shot)."""
    messages = generator_messages(task.prompt(), GENERATOR_PROMPT)
    return draft_call(chat, task, "generator", messages, seed, sampling)


def refine_step(chat: Callable, task: Task, previous: str, feedback: str, seed: int | None = SEED,
                sampling: Mapping[str, dict] = SAMPLING) -> Step:
    """A revision: the refiner sees the task, the previous draft and the critic's feedback."""
    messages = [{"role": "system", "content": REFINER_SYSTEM},
                {"role": "user", "content": refine_request(task, previous, feedback)}]
    return draft_call(chat, task, "refiner", messages, seed, sampling)


def critique_step(critic, task: Task, code: str):
    """The critic's Evaluation of a draft (any object with `evaluate(task, code)`)."""
    return critic.evaluate(task, code)


def critic_record(ev, rule: StopRule) -> Step:
    """The step a critique is recorded as: its score as a verdict (accepted at the rule's threshold), a
    model step when the critic called a model (a repaired critique counts its calls in the label)."""
    prompt, completion, calls = ev.detail.get("usage", (0, 0, 0))
    label = ("unusable" if ev.score is None else f"score {ev.score:g}") + (f" ({calls} calls)" if calls > 1 else "")
    verdict = Verdict(label, rule.accepts(ev.score), ev.score, reason=ev.feedback if ev.score is None else "")
    return Step(0, "critic", "model" if calls else "check", "", ev.feedback, prompt, completion, 0.0, verdict)


def scored_reflection(chat: Callable, task: Task, critic, rule: StopRule | None = None, seed: int | None = SEED,
                      first_draft: str | None = None, sampling: Mapping[str, dict] = SAMPLING) -> ScoredResult:
    """Run generator -> critic -> refiner ... until `rule` says stop (see module docstring).

    `first_draft` starts from an existing draft (e.g. lesson 01's) instead of calling the
    generator, so several critics can be compared on the same first drafts; its generation
    tokens are not counted here."""
    rule = rule or StopRule()
    history: list[ScoredAttempt] = []
    while True:
        code = None
        try:
            if first_draft is not None and not history:
                code, used, call = first_draft, 0, None
            else:
                call = (generate_step(chat, task, seed, sampling) if not history
                        else refine_step(chat, task, history[-1].output, history[-1].feedback, seed, sampling))
                code, used = call.code, call.prompt_tokens + call.completion_tokens
            ev = critique_step(critic, task, code)
        except ModelError as err:
            if code is not None:  # the draft arrived, its critique did not: keep it, unscored
                history.append(ScoredAttempt(len(history) + 1, code, None, f"not judged: {err}", used, (call,) if call else ()))
            best = best_so_far(history) or ScoredAttempt(0, "", None, f"no draft: {err}")
            return ScoredResult(task.id, best, history, "provider_error", str(err), rule)
        history.append(ScoredAttempt(len(history) + 1, code, ev.score, ev.feedback, used + ev.tokens,
                                     (*((call,) if call else ()), critic_record(ev, rule))))
        if ev.score is None and ev.detail.get("permanent"):  # e.g. no evidence for this task: revising cannot help
            return ScoredResult(task.id, best_so_far(history), history, "invalid_critic", rule=rule)
        reason = rule.decide(history)
        if reason:
            return ScoredResult(task.id, history[chosen_index(history, reason)], history, reason, rule=rule)
