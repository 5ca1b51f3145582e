"""One record shape for every strategy: a `Run` is an ordered list of `Step`s and one outcome.

A `Step` is one model call or one check inside a run (compare smolagents' `ActionStep` and
LangGraph's state snapshots: one record per step, kept in order, printable, JSON-ready).
A `Run` is what one strategy did on one task: the final code, why it stopped (`Stop`, a fixed
set), every step, tokens by role, model calls, wall time, and which draft was chosen and why.
`Critic` and `Strategy` are the two small protocols the lessons build on. This module imports nothing else
from the package, so every layer may use it (and `parse_python` and `compile_tree`, the AST under one lock).
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

# CPython 3.11 and 3.12 keep the AST converter's recursion counter in one process-wide state,
# so two threads turning source into `ast` objects (or back) at once can fail with
# "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905). `conn.map`
# judges drafts on several threads, so every conversion in the package goes through this lock.
_AST_LOCK = threading.Lock()


def parse_python(source: str) -> ast.Module:
    """`ast.parse(source)`, safe to call from several threads at once. Code outside the package parses without
    the lock (langchain_core reads a lambda's source with `ast.parse` inside LangGraph's worker threads), so a
    conversion it overlapped fails with that SystemError: the parse is tried once more, the overlap over."""
    with _AST_LOCK:
        try:
            return ast.parse(source)
        except SystemError as err:
            if "recursion depth mismatch" not in str(err):
                raise
            return ast.parse(source)


def parsed(source: str) -> ast.Module | None:
    """`parse_python(source)`, or None for code that does not parse."""
    try:
        return parse_python(source)
    except (SyntaxError, ValueError):
        return None


def compile_tree(tree: ast.AST, filename: str, mode: str):
    """`compile(tree, filename, mode)` for an `ast` tree, safe to call from several threads at once."""
    with _AST_LOCK:
        return compile(tree, filename, mode)


class Stop(StrEnum):
    """Why a run ended. The same few reasons for every strategy."""

    ACCEPTED = "accepted"  # the critic or reviewer accepted the draft
    SINGLE_DRAFT = "single_draft"  # a one-draft strategy (one-shot): there was nothing to stop
    MAX_ITERATIONS = "max_iterations"  # the cap on drafts, attempts or samples was reached
    TOKEN_BUDGET = "token_budget"  # another attempt would have spent more than the token budget
    CONVERGED = "converged"  # no better score for `patience` rounds
    OSCILLATING = "oscillating"  # a draft came back, or scores swung up and down
    REGRESSED = "regressed"  # the score fell well below the best: reverted to the best
    INVALID_CRITIC = "invalid_critic"  # the critic's output could not be used
    NO_CODE = "no_code"  # the reply held no code: nothing to judge (the graph sends it to review)
    CHECK_FAILED = "check_failed"  # the critic accepted a draft that a deterministic check rejects
    PROVIDER_ERROR = "provider_error"  # the model's server failed (timeout, refused, 5xx)
    BLANK_INPUT = "blank_input"  # nothing to do: no model call was made


@dataclass(frozen=True)
class Verdict:
    """What a judging step decided about the draft before it, as fields, not text to parse.

    `accepted` is the judge's own decision: the reviewer's APPROVED, a score at the stop rule's
    threshold, every one of the agent's asserts passing, an evaluator's "pass". None means the
    judge decided nothing usable (an unparseable critique, a critic with no evidence for the task).
    `label` is how the step prints it ("approved", "score 7", "3/5 passed", "pass, score 0.8")."""

    label: str
    accepted: bool | None = None
    score: float | None = None  # the critic's or evaluator's score, when it gave one
    passed: int | None = None  # asserts passed, for a judge that runs tests
    total: int | None = None  # asserts run
    reason: str = ""  # why the verdict is unusable, when it is

    def __str__(self) -> str:
        return self.label


@dataclass(frozen=True)
class Step:
    """One model call (kind "model"), one check (kind "check") or a draft handed to the run (kind
    "input": a first draft it did not make) inside a run, in order."""

    index: int
    role: str  # generator | reviewer | critic | refiner | tests | ...
    kind: str  # "model", "check" or "input"
    request: str = ""  # what was asked: the last message sent, or what was checked
    reply: str = ""  # the reply text, or the evidence of a check
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    # what this step decided about the draft before it, if it judged one
    verdict: Verdict | None = None
    code: str | None = None  # the draft this step produced, if it produced one
    # a remark on a step that judges nothing: "4 asserts", "same code as attempt 1"
    note: str | None = None

    @property
    def is_draft(self) -> bool:
        """Does this step make (or hand the run) a draft? A model or input step with code."""
        return self.code is not None and self.kind in ("model", "input")

    def line(self, width: int = 70) -> str:
        """One printable line: index, role, tokens, verdict (or note) and the start of the reply."""
        tokens = (
            f"{self.prompt_tokens}+{self.completion_tokens} tok"
            if self.kind == "model"
            else self.kind
        )
        text = " ".join(self.reply.split())
        text = text if len(text) <= width else text[: width - 3] + "..."
        said = self.verdict.label if self.verdict else self.note
        verdict = f" [{said}]" if said else ""
        return f"{self.index:>2} {self.role:<9} {tokens:>13}{verdict} {text}"

    def to_dict(self) -> dict[str, Any]:
        """The step as plain values (a graph's state keeps its steps so)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Step:
        """The inverse of `asdict` (a verdict that is not a dict of Verdict's fields is a TypeError)."""
        verdict = data.get("verdict")
        return cls(**{**data, "verdict": None if verdict is None else Verdict(**verdict)})


@dataclass(frozen=True, kw_only=True)
class Run:
    """The outcome of one strategy on one task; the same fields whatever the strategy."""

    strategy: str
    task_id: str
    final_code: str
    stop: Stop
    steps: tuple[Step, ...] = ()
    chosen: str = ""  # which draft is final_code, and why ("the best score, 8, at iteration 1")
    wall_s: float = 0.0
    error: str | None = None
    passed: bool | None = None  # the hidden tests' verdict on final_code, when judged

    @property
    def calls(self) -> int:
        """Model calls made (checks are not calls)."""
        return sum(s.kind == "model" for s in self.steps)

    @property
    def accepted(self) -> bool:
        """Did the run end on a draft its judge accepted (a reviewer's APPROVED, a score at the threshold)?"""
        return self.stop is Stop.ACCEPTED

    @property
    def drafts(self) -> list[str]:
        """The code of every draft the run made (or was given), in order ("" for a reply with no code)."""
        return [s.code or "" for s in self.steps if s.is_draft]

    @property
    def judgements(self) -> list[Step]:
        """The steps that judged a draft (a review, a critique, a check), in order."""
        return [s for s in self.steps if s.verdict is not None]

    @property
    def tokens_by_role(self) -> dict[str, int]:
        """Prompt + completion tokens per role, in the order roles first appear."""
        out: dict[str, int] = {}
        for s in self.steps:
            if s.kind == "model":
                out[s.role] = out.get(s.role, 0) + s.prompt_tokens + s.completion_tokens
        return out

    @property
    def tokens(self) -> int:
        """All tokens of all model calls."""
        return sum(self.tokens_by_role.values())

    def show(self) -> str:
        """The run as text: one line per step, then the outcome."""
        calls = f"{self.calls} call" + ("" if self.calls == 1 else "s")
        head = f"{self.strategy} on {self.task_id}: stop={self.stop.value}, {calls}, {self.tokens} tokens"
        lines = [head, *(s.line() for s in self.steps), f"final: {self.chosen}"]
        if self.error:
            lines.append(f"error: {self.error}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the stop reason as its string)."""
        d = asdict(self)
        d["stop"] = self.stop.value
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Run:
        """The inverse of to_dict."""
        data = dict(data)
        data["stop"] = Stop(data["stop"])
        data["steps"] = tuple(Step.from_dict(s) for s in data.get("steps", ()))
        return cls(**data)


class ReplyLike(Protocol):
    """What a chat function returns: text and token counts (Connection's Reply, a FakeReply)."""

    text: str
    prompt_tokens: int
    completion_tokens: int


# chat(messages, role=..., **params) -> Reply; Connection.chat fits
ChatFn = Callable[..., ReplyLike]


@runtime_checkable
class Critic(Protocol):
    """Evaluates code for a task; returns an Evaluation (score 1-10 or None, feedback, tokens)."""

    def evaluate(self, task: Any, code: str) -> Any:
        """Judge `code` for `task`."""
        ...


# in a strategy field's metadata: a field added after runs were recorded, part of the strategy's identity only when
# it differs from its default, so the runs made before it keep their key (reflect.evaluation.runner.settings)
KEYED_WHEN_SET = "keyed_when_set"


@runtime_checkable
class Strategy(Protocol):
    """Runs one task with a chat function and returns a Run."""

    name: str

    def run(self, task: Any, chat: ChatFn) -> Run:
        """Run `task` with `chat`; return the Run."""
        ...


def model_step(
    index: int,
    role: str,
    messages: list[dict],
    reply: Any,
    code: str | None = None,
    verdict: Verdict | None = None,
    note: str | None = None,
) -> Step:
    """A Step for one model call from the messages sent and the reply received."""
    last = str(messages[-1].get("content", "")) if messages else ""
    return Step(
        index,
        role,
        "model",
        last,
        getattr(reply, "text", "") or "",
        getattr(reply, "prompt_tokens", 0),
        getattr(reply, "completion_tokens", 0),
        getattr(reply, "latency_s", 0.0),
        verdict,
        code,
        note,
    )
