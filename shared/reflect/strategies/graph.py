"""Lesson 04: the reflection loop as a LangGraph graph, `reflection_code_reviewer`.

    START -> prepare_task -> generate_initial_draft -> critique_draft
    critique_draft -> finalize | refine_draft | mark_needs_review      (when it stops: `_stop_of`)
    refine_draft -> critique_draft
    prepare_task / generate_initial_draft / refine_draft -> handle_failure

The nodes call lesson 03's step functions, so both send byte-identical requests; every node appends its `Step`
to `state["steps"]`, and the state is read off them (`graph_state`). Beside this file: the task, requirements
and rule checks (`graph_requirements`), and how a run ends, with a person's review when `human_review=True`
(`graph_review`). How each edge, the review and threads work: docs/package.md, "The modules in detail".
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Literal, TypedDict

from ..judging.controller import drafts_of
from ..judging.critics import Evaluation
from ..model.llm import ModelError
from ..model.roles import SEED
from ..records import ChatFn, Critic, Run, Stop
from ..tasks.prompts import GENERATOR_PROMPT, REFINER_SYSTEM
from ..tasks.task import Task
from . import graph_requirements
from .base import execute
from .graph_requirements import (
    GRAPH_NAME,
    failed_checks,
    judged_task,
    prepare_task,
    rule_checks,
    rules_step,
    static_checks,
    writer_task,
)
from .graph_review import after_review, closing_run, final_output, needs_review
from .graph_review import outcome as outcome  # how a run ended, as rg.outcome
from .graph_state import (
    critic_step,
    critique,
    current_draft,
    iteration,
    normalise,
    reply_has_code,
    run_config,
    start_state,
    steps_of,
    this_run,
)

# what a lesson's own code reads as rg.<name>
from .graph_state import critique_status as critique_status
from .graph_state import fresh_thread as fresh_thread
from .scored import critique_step, generate_step, refine_step


class ReviewState(TypedDict, total=False):
    """The graph's state: what a run cannot derive, and its record. Lists that grow have a reducer
    that appends. The current draft, the iteration, the last critique and its status, the rule
    checks and whether the last reply held code are read off `steps` (`current_draft`, `iteration`,
    `critique`, `critique_status`, `rule_checks`, `reply_has_code`); `outcome` says how a run ended."""

    input: str
    requirements: list[str]
    max_iterations: int
    metadata: dict  # the run's settings, and its review (_REVIEW_KEYS)
    steps: Annotated[list[dict], operator.add]  # each a Step, as `Step.to_dict` makes it
    errors: Annotated[list[str], operator.add]
    status: Literal["ok", "needs_review", "rejected", "failed"] | None
    run_start: dict  # where this run's entries start in steps and errors (a reused thread)
    final_output: dict | None  # written once, when the run ends
    run: dict | None  # the Run, as `Run.to_dict` makes it, written once when the run ends


@dataclass
class GraphParts:
    """What the nodes close over: the chat function, the critic and the settings."""

    chat: ChatFn
    critic: Critic
    threshold: float = 8
    seed: int | None = SEED
    human_review: bool = False
    # a known task (its tests and checks); else one is built from the input
    task: Task | None = None
    name: str = "graph"  # the strategy's name in the Run


def build_nodes(p: GraphParts) -> dict[str, Callable[[dict], dict]]:
    """The seven node functions (each takes the state and returns the fields it changes)."""

    def task_of(state: dict) -> Task:
        return graph_requirements.task_of(state, p)

    def ended(state: dict, stop: Stop) -> dict:
        """The Run of a run that ends here, for `state["run"]` (`graph_review.closing_run`)."""
        task_id = p.task.id if p.task else state.get("metadata", {}).get("task_id", "custom")
        return closing_run(state, stop, task_id, p.name)

    def draft_node(kind: str) -> Callable[[dict], dict]:
        def node(state: dict) -> dict:
            task = writer_task(state, p)
            try:
                call = (
                    generate_step(p.chat, task, p.seed)
                    if kind == "generate"
                    else refine_step(
                        p.chat, task, current_draft(state), critique(state) or "", p.seed
                    )
                )
                code = call.code
            except ModelError as err:
                return {"errors": [f"model error in {kind}: {err}"], "status": "failed"}
            out = {"steps": [replace(call, index=len(this_run(state, "steps"))).to_dict()]}
            if (
                not code.strip()
            ):  # the last draft that had code stays current: a reply in prose is recorded
                reply = " ".join(call.reply.split())
                out["errors"] = [
                    f"no code in the {kind} reply at iteration {iteration(state) + 1}: "
                    f"{reply[:120] or '(an empty reply)'}"
                ]
            return out

        return node

    def critique_draft(state: dict) -> dict:
        task, code = judged_task(state, p), current_draft(state) or ""
        try:
            ev = critique_step(p.critic, task, code)
        except ModelError as err:
            ev = Evaluation(None, f"the critic's model failed: {err}")
        status, text, raw = normalise(ev, p.threshold)
        if status == "invalid" and isinstance(raw, str) and raw.strip() and raw.strip() not in text:
            text = f"{text}\nThe reply: {raw}"  # the unusable output is kept in the record
        step = critic_step(len(this_run(state, "steps")), status, text, ev.score, ev.usage)
        checked = {**state, "steps": [*state.get("steps", []), step.to_dict()]}
        out = {"steps": [step.to_dict(), rules_step(checked, static_checks(task, code))]}
        if status == "invalid":
            out["errors"] = [f"invalid critic output at iteration {iteration(state)}: {text[:200]}"]
        return out

    def finalize(state: dict) -> dict:
        upd = {"status": "ok"}
        return upd | {
            "final_output": final_output({**state, **upd}),
            "run": ended({**state, **upd}, Stop.ACCEPTED),
        }

    def mark_needs_review(state: dict) -> dict:
        upd, after, stop = needs_review(state, _review_stop, p.human_review, task_of)
        return upd | {"final_output": final_output(after), "run": ended(after, stop)}

    def handle_failure(state: dict) -> dict:
        upd = {"status": "failed"}
        stop = Stop.PROVIDER_ERROR if (state.get("input") or "").strip() else Stop.BLANK_INPUT
        return upd | {
            "final_output": final_output({**state, **upd}),
            "run": ended({**state, **upd}, stop),
        }

    return {
        "prepare_task": lambda state: prepare_task(state, p),
        "generate_initial_draft": draft_node("generate"),
        "critique_draft": critique_draft,
        "refine_draft": draft_node("refine"),
        "finalize": finalize,
        "mark_needs_review": mark_needs_review,
        "handle_failure": handle_failure,
    }


def _stop_of(state: dict) -> Stop | None:
    """Why the loop stops after a critique, read off this run's steps: the last judge on the current
    draft decided nothing usable (an invalid critique), or accepted it with no check step against it
    (`normalise` has applied the threshold), or `max_iterations` drafts are spent; else None, go on.
    No convergence, regression or oscillation rule."""
    drafts = drafts_of(steps_of(state), accept_by="judge")
    if not drafts:
        return None
    if drafts[-1].accepted is None:
        return Stop.INVALID_CRITIC
    if drafts[-1].accepted:
        return Stop.ACCEPTED
    return Stop.MAX_ITERATIONS if len(drafts) >= state["max_iterations"] else None


def _review_stop(state: dict) -> Stop:
    """Why a run goes to a person: no code, an unusable critique, an acceptance a rule check
    contradicts, or the budget (the stop rule on this run's steps)."""
    if reply_has_code(state) is False or not (current_draft(state) or "").strip():
        return Stop.NO_CODE
    stop = _stop_of(state)
    return Stop.CHECK_FAILED if stop is Stop.ACCEPTED else stop or Stop.MAX_ITERATIONS


def after_prepare(state: dict) -> str:
    """Blank or unusable input goes to handle_failure before any model call."""
    return "handle_failure" if state.get("status") == "failed" else "generate_initial_draft"


def after_draft(state: dict) -> str:
    """A model failure ends the run; a reply with no code goes to review; a draft is critiqued."""
    if state.get("status") == "failed":
        return "handle_failure"
    has_code = reply_has_code(state) is not False and (current_draft(state) or "").strip()
    return "critique_draft" if has_code else "mark_needs_review"


def after_critique(state: dict) -> str:
    """The stop on this run's steps (`_stop_of`): no stop -> refine_draft; accepted, and no
    rule check failed -> finalize; else mark_needs_review (the budget, an invalid critique, or an
    acceptance a rule check contradicts)."""
    stop = _stop_of(state)
    if stop is None:
        return "refine_draft"
    return (
        "finalize"
        if stop is Stop.ACCEPTED and not failed_checks(rule_checks(state))
        else "mark_needs_review"
    )


def build_graph(parts: GraphParts, checkpointer: Any = None):
    """The compiled `reflection_code_reviewer` graph."""
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(ReviewState)
    for name, fn in build_nodes(parts).items():
        g.add_node(name, fn)
    g.add_edge(START, "prepare_task")
    g.add_conditional_edges(
        "prepare_task", after_prepare, ["generate_initial_draft", "handle_failure"]
    )
    for drafter in ("generate_initial_draft", "refine_draft"):
        g.add_conditional_edges(
            drafter, after_draft, ["critique_draft", "mark_needs_review", "handle_failure"]
        )
    g.add_conditional_edges(
        "critique_draft", after_critique, ["finalize", "refine_draft", "mark_needs_review"]
    )
    for name in ("finalize", "handle_failure"):
        g.add_edge(name, END)
    if parts.human_review:  # a refused decision goes back to the pause
        g.add_conditional_edges("mark_needs_review", after_review, ["mark_needs_review", END])
    else:
        g.add_edge("mark_needs_review", END)
    return g.compile(checkpointer=checkpointer, name=GRAPH_NAME)


@dataclass
class ReflectionGraph:
    """Lesson 04's graph as a Strategy: `run(task, chat) -> Run`, like lessons 01-03."""

    critic_for: Callable[[ChatFn], Critic]  # builds the critic from the chat function
    max_iterations: int = 3
    threshold: float = 8
    seed: int | None = SEED
    judge_hidden: bool = True
    name: str = "graph"
    options: dict = field(default_factory=dict)
    ROLES = ("generator", "refiner")

    def prompts(self) -> tuple[str, ...]:
        """Lesson 03's generator and refiner prompts, which the graph's nodes send."""
        return GENERATOR_PROMPT, REFINER_SYSTEM

    def run(self, task: Task, chat: ChatFn) -> Run:
        """Invoke the graph on the task and return its Run."""

        def body() -> Run:
            graph = build_graph(
                GraphParts(
                    chat,
                    self.critic_for(chat),
                    self.threshold,
                    self.seed,
                    task=task,
                    name=self.name,
                )
            )
            state = graph.invoke(
                start_state(task.prompt(), self.max_iterations), run_config(self.max_iterations)
            )
            return Run.from_dict(state["run"])

        return execute(self, task, body)
