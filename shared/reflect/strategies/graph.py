"""Lesson 04: the reflection loop as a LangGraph graph, `reflection_code_reviewer`.

    START -> prepare_task -> generate_initial_draft -> critique_draft
    critique_draft -> finalize            when the critique accepts the draft
                   -> refine_draft        when it asks for changes and the budget allows another draft
                   -> mark_needs_review   when the next draft would exceed max_iterations, or the
                                          critique is invalid
    refine_draft -> critique_draft
    prepare_task -> handle_failure        blank input, before any model call
    generate_initial_draft / refine_draft -> handle_failure   when the model fails

The nodes call the same step functions as lesson 03's loop (`generate_step`, `refine_step`,
`critique_step` in reflect.strategies.scored), so both send byte-identical requests. The graph
bounds itself with its own counter (`iteration` against `max_iterations`) and also sets
`recursion_limit`: langgraph 1.2's default is 10,007 super-steps, no guard at all.

Human review: with `human_review=True`, `mark_needs_review` pauses with `interrupt()` and a
checkpointer keeps the paused state (in SQLite it survives a restart). The node makes no model
call before `interrupt()`, because a resumed node runs again from its first line.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, TypedDict

from ..judging.critics import Evaluation
from ..judging.sentinel import strict_sentinel
from ..model.llm import ModelError
from ..records import ChatFn, Critic, Run, Step, Stop
from ..tasks.task import Task, course_tasks
from .scored import critique_step, generate_step, refine_step

GRAPH_NAME = "reflection_code_reviewer"
PROMPT_VERSION = "lesson-03-v1"  # the generator, refiner and critic prompts of lesson 03
SENTINELS = ("APPROVED", "CODE_IS_PERFECT")
CritiqueStatus = Literal["accepted", "needs_revision", "invalid"]


class ReviewState(TypedDict, total=False):
    """The graph's state; lists that grow have a reducer that appends."""

    input: str
    requirements: list[str]
    current_draft: str | None
    critique: str | None
    critique_status: CritiqueStatus | None
    iteration: int
    max_iterations: int
    revision_history: Annotated[list[dict], operator.add]
    errors: Annotated[list[str], operator.add]
    status: Literal["ok", "needs_review", "failed"] | None
    final_output: dict | None
    metadata: dict
    raw_critic_output: str | dict | None
    static_check_results: dict | None


def task_for(text: str, requirements: list[str] | None = None) -> Task:
    """The course task whose prompt is `text`, or an ad-hoc task (no tests) built from it."""
    for t in course_tasks():
        if text.strip() in (t.prompt().strip(), t.statement.strip()):
            return t
    name = re.search(r"\b([A-Za-z_]\w*)\s*\(", text)
    return Task(id="custom", entry_point=name.group(1) if name else "solution", statement=text.strip(), tests="",
                requirements=tuple(requirements or ()))


def normalise(ev: Evaluation, threshold: float) -> tuple[CritiqueStatus, str, str | None]:
    """(status, critique text, raw output) from a critic's Evaluation.

    A sentinel reply (APPROVED, CODE_IS_PERFECT, read strictly as in lesson 02) accepts; a
    JSON score at or above `threshold` accepts, below asks for changes; no usable score is
    invalid, and so is a reply that says both (a sentinel and a score below the threshold)."""
    raw = ev.detail.get("raw")
    sentinel = bool(raw) and any(strict_sentinel(raw, s) for s in SENTINELS)
    if sentinel and ev.score is not None and ev.score < threshold:
        return "invalid", f"contradictory critique: a sentinel and a score of {ev.score:g}", raw
    if sentinel:
        return "accepted", ev.feedback if ev.score is not None else "approved (sentinel)", raw
    if ev.score is None:
        return "invalid", ev.feedback, raw
    return ("accepted" if ev.score >= threshold else "needs_revision"), ev.feedback, raw


def static_checks(task: Task, code: str) -> dict:
    """Deterministic checks of a draft: the task's rule checks (and nothing that calls a model)."""
    results = task.static_checks(code) if code.strip() else []
    return {"passed": all(c.passed for c in results) and bool(results),
            "checks": [{"name": c.name, "passed": c.passed, "reason": c.reason} for c in results]}


def final_output(state: dict) -> dict:
    """The user-facing result."""
    return {"status": state.get("status"), "accepted": state.get("critique_status") == "accepted"
            or bool(state.get("metadata", {}).get("human_decision") in ("approve", "edit")),
            "iterations": state.get("iteration", 0), "final_code": state.get("current_draft") or "",
            "final_critique": state.get("critique") or "", "errors": list(state.get("errors", []))}


@dataclass
class GraphParts:
    """What the nodes close over: the chat function, the critic and the settings."""

    chat: ChatFn
    critic: Critic
    threshold: float = 8
    seed: int | None = 42
    human_review: bool = False
    task: Task | None = None  # a known task (its tests and checks); else one is built from the input


def build_nodes(p: GraphParts) -> dict[str, Callable[[dict], dict]]:
    """The seven node functions (each takes the state and returns the fields it changes)."""

    def task_of(state: dict) -> Task:
        return p.task or task_for(state["input"], state.get("requirements"))

    def prepare_task(state: dict) -> dict:
        text = (state.get("input") or "").strip()
        if not text:
            return {"errors": ["blank input: give the graph a task to write code for"], "iteration": 0,
                    "max_iterations": state.get("max_iterations", 3), "status": "failed", "current_draft": None,
                    "critique": None, "critique_status": None, "metadata": {"graph": GRAPH_NAME, **state.get("metadata", {})}}
        task = task_of(state)
        meta = {"graph": GRAPH_NAME, "prompt_version": PROMPT_VERSION, "task_id": task.id,
                "critic": type(p.critic).__name__, "threshold": p.threshold, "seed": p.seed} | state.get("metadata", {})
        return {"input": text, "requirements": list(state.get("requirements") or task.requirements), "iteration": 0,
                "max_iterations": state.get("max_iterations", 3), "metadata": meta, "status": None,
                "current_draft": None, "critique": None, "critique_status": None}

    def record(state: dict, kind: str, code: str, used: int, call: dict) -> dict:
        return {"iteration": state["iteration"] + 1, "kind": kind, "draft": code, "tokens": used, "call": call}

    def draft_node(kind: str) -> Callable[[dict], dict]:
        def node(state: dict) -> dict:
            task = task_of(state)
            try:
                if kind == "generate":
                    code, used, call = generate_step(p.chat, task, p.seed)
                else:
                    code, used, call = refine_step(p.chat, task, state["current_draft"], state["critique"] or "", p.seed)
            except ModelError as err:
                return {"errors": [f"model error in {kind}: {err}"], "status": "failed"}
            return {"current_draft": code, "iteration": state["iteration"] + 1,
                    "revision_history": [record(state, kind, code, used, call)]}
        return node

    def critique_draft(state: dict) -> dict:
        task = task_of(state)
        try:
            ev = critique_step(p.critic, task, state["current_draft"] or "")
        except ModelError as err:
            ev = Evaluation(None, f"the critic's model failed: {err}")
        status, text, raw = normalise(ev, p.threshold)
        entry = {"iteration": state["iteration"], "kind": "critique", "critique": text, "status": status,
                 "score": ev.score, "tokens": ev.tokens, "usage": list(ev.detail.get("usage", (0, 0, 0)))}
        out = {"critique": text, "critique_status": status, "raw_critic_output": raw,
               "static_check_results": static_checks(task, state["current_draft"] or ""),
               "revision_history": [entry]}
        if status == "invalid":
            out["errors"] = [f"invalid critic output at iteration {state['iteration']}: {text[:200]}"]
        return out

    def finalize(state: dict) -> dict:
        done = {**state, "status": "ok"}
        return {"status": "ok", "final_output": final_output(done)}

    def mark_needs_review(state: dict) -> dict:
        reason = ("max_iterations reached before acceptance" if state.get("critique_status") == "needs_revision"
                  else "the critic's output could not be used")
        meta, status, code, logged = state.get("metadata", {}), "needs_review", state.get("current_draft"), []
        if p.human_review:
            from langgraph.types import interrupt  # no model call may come before this line

            decision = interrupt({"question": "approve, edit or reject this draft?", "reason": reason,
                                  "draft": code, "critique": state.get("critique"),
                                  "iteration": state.get("iteration")}) or {}
            action = decision.get("action", "reject")
            meta = {**meta, "human_decision": action}
            if action in ("approve", "edit"):
                status, code = "ok", decision.get("code") if action == "edit" else code
                logged = [{"iteration": state["iteration"], "kind": f"human_{action}", "draft": code}]
        upd = {"status": status, "current_draft": code, "metadata": meta, "errors": [reason]}
        if logged:
            upd["revision_history"] = logged
        done = {**state, **upd, "errors": [*state.get("errors", []), reason]}  # what the reducer will hold
        return upd | {"final_output": final_output(done)}

    def handle_failure(state: dict) -> dict:
        upd = {"status": "failed"}
        return upd | {"final_output": final_output({**state, **upd})}

    return {"prepare_task": prepare_task, "generate_initial_draft": draft_node("generate"),
            "critique_draft": critique_draft, "refine_draft": draft_node("refine"), "finalize": finalize,
            "mark_needs_review": mark_needs_review, "handle_failure": handle_failure}


def after_prepare(state: dict) -> str:
    """Blank or unusable input goes to handle_failure before any model call."""
    return "handle_failure" if state.get("status") == "failed" else "generate_initial_draft"


def after_draft(state: dict) -> str:
    """A model failure (or a missing draft) ends the run; otherwise the draft is critiqued."""
    return "handle_failure" if state.get("status") == "failed" or state.get("current_draft") is None else "critique_draft"


def after_critique(state: dict) -> str:
    """accepted -> finalize; needs_revision and budget left -> refine_draft; else mark_needs_review."""
    if state.get("critique_status") == "accepted":
        return "finalize"
    if state.get("critique_status") == "needs_revision" and state["iteration"] < state["max_iterations"]:
        return "refine_draft"
    return "mark_needs_review"


def build_graph(parts: GraphParts, checkpointer: Any = None):
    """The compiled `reflection_code_reviewer` graph."""
    from langgraph.graph import END, START, StateGraph

    g = StateGraph(ReviewState)
    for name, fn in build_nodes(parts).items():
        g.add_node(name, fn)
    g.add_edge(START, "prepare_task")
    g.add_conditional_edges("prepare_task", after_prepare, ["generate_initial_draft", "handle_failure"])
    g.add_conditional_edges("generate_initial_draft", after_draft, ["critique_draft", "handle_failure"])
    g.add_conditional_edges("refine_draft", after_draft, ["critique_draft", "handle_failure"])
    g.add_conditional_edges("critique_draft", after_critique, ["finalize", "refine_draft", "mark_needs_review"])
    for name in ("finalize", "mark_needs_review", "handle_failure"):
        g.add_edge(name, END)
    return g.compile(checkpointer=checkpointer, name=GRAPH_NAME)


def run_config(max_iterations: int, thread_id: str | None = None) -> dict:
    """The config for one run: an explicit recursion limit (a second guard), and a thread id."""
    config: dict = {"recursion_limit": 2 * max_iterations + 6}
    if thread_id:
        config["configurable"] = {"thread_id": thread_id}
    return config


def start_state(text: str, max_iterations: int = 3, requirements: list[str] | None = None,
                metadata: dict | None = None) -> dict:
    """The input state for one run."""
    return {"input": text, "max_iterations": max_iterations, "requirements": list(requirements or []),
            "metadata": dict(metadata or {}), "revision_history": [], "errors": []}


@dataclass
class ReflectionGraph:
    """Lesson 04's graph as a Strategy: `run(task, chat) -> Run`, like lessons 01-03."""

    critic_for: Callable[[ChatFn], Critic]  # builds the critic from the chat function
    max_iterations: int = 3
    threshold: float = 8
    seed: int | None = 42
    judge_hidden: bool = True
    name: str = "graph"
    options: dict = field(default_factory=dict)

    def run(self, task: Task, chat: ChatFn) -> Run:
        """Invoke the graph on the task and return its Run."""
        from .objects import (
            _execute,  # the frame every strategy shares: blank input, timing, hidden tests
        )

        def body() -> Run:
            graph = build_graph(GraphParts(chat, self.critic_for(chat), self.threshold, self.seed, task=task))
            return as_run(graph.invoke(start_state(task.prompt(), self.max_iterations), run_config(self.max_iterations)),
                          task.id, self.name)

        return _execute(self, task, body)


def as_run(state: dict, task_id: str, strategy: str = "graph", wall_s: float = 0.0) -> Run:
    """A final graph state as a Run (one Step per model call or check, in order)."""
    steps: list[Step] = []
    for entry in state.get("revision_history", []):
        call = entry.get("call") or {}
        if entry["kind"] in ("generate", "refine") and call:
            steps.append(Step(len(steps), call["role"], "model", call["request"], call["reply"], call["prompt_tokens"],
                              call["completion_tokens"], call["latency_s"], code=entry["draft"]))
        elif entry["kind"] == "critique":
            prompt, completion, calls = (entry.get("usage") or [0, 0, 0])[:3]
            score = entry.get("score")
            steps.append(Step(len(steps), "critic", "model" if calls else "check", "", entry["critique"], prompt,
                              completion, 0.0, entry["status"] + ("" if score is None else f" (score {score:g})")))
        elif entry["kind"].startswith("human_"):
            steps.append(Step(len(steps), "human", "check", "", entry["kind"], verdict=entry["kind"], code=entry["draft"]))
    errors = state.get("errors", [])
    if not (state.get("input") or "").strip():
        stop = Stop.BLANK_INPUT
    elif state.get("critique_status") == "accepted" or state.get("status") == "ok":
        stop = Stop.ACCEPTED
    elif state.get("status") == "failed":
        stop = Stop.PROVIDER_ERROR
    elif state.get("critique_status") == "invalid":
        stop = Stop.INVALID_CRITIC
    else:
        stop = Stop.BUDGET
    chosen = f"the latest draft, iteration {state.get('iteration', 0)} (the graph keeps the last draft)"
    return Run(strategy, task_id, state.get("current_draft") or "", stop, tuple(steps), chosen, wall_s,
               "; ".join(errors) or None)
