"""Lesson 04's graph, `reflection_code_reviewer`, on scripted models: routing, budget, state,
critic normalisation, human review with checkpoints (in memory and across processes), and
the same history as lesson 03's loop."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reflect.judging.controller import StopRule
from reflect.judging.critics import Evaluation, LLMCritic
from reflect.model.fakes import ScriptedChat
from reflect.model.llm import ModelError
from reflect.strategies.graph import (
    GraphParts,
    ReflectionGraph,
    as_run,
    build_graph,
    normalise,
    run_config,
    start_state,
    task_for,
)
from reflect.strategies.scored import scored_reflection
from reflect.tasks.task import get_task

ROOT = Path(__file__).resolve().parents[1]
TASK = get_task("factorial")


def draft(n: int) -> str:
    return f"```python\ndef calculate_factorial(n):\n    return {n}\n```"


class Scores:
    """A critic that returns the scripted scores in order, and counts its calls."""

    def __init__(self, *scores):
        self.scores, self.calls = list(scores), 0

    def evaluate(self, task, code):
        self.calls += 1
        s = self.scores.pop(0)
        raw = "not json" if s is None else json.dumps({"score": s})
        return Evaluation(s, f"feedback {s}", 0, {"raw": raw})


def chat_for(n_refines: int) -> ScriptedChat:
    return ScriptedChat({"generator": [draft(1)], "refiner": [draft(i + 2) for i in range(n_refines)]})


def invoke(chat, critic, max_iterations=3, text=None, **parts):
    graph = build_graph(GraphParts(chat, critic, task=TASK, **parts))
    return graph.invoke(start_state(TASK.prompt() if text is None else text, max_iterations), run_config(max_iterations))


def kinds(state):
    return [e["kind"] for e in state["revision_history"]]


def test_a_first_draft_that_is_accepted_never_enters_refine():
    chat, critic = chat_for(0), Scores(9)
    out = invoke(chat, critic)
    assert out["status"] == "ok" and out["final_output"]["accepted"] is True and out["iteration"] == 1
    assert kinds(out) == ["generate", "critique"] and [c.role for c in chat.calls] == ["generator"]


def test_one_revision_then_accepted_keeps_both_attempts():
    chat, critic = chat_for(1), Scores(5, 9)
    out = invoke(chat, critic)
    assert kinds(out) == ["generate", "critique", "refine", "critique"]
    assert [e["draft"] for e in out["revision_history"] if "draft" in e] == [
        "def calculate_factorial(n):\n    return 1\n", "def calculate_factorial(n):\n    return 2\n"]
    assert out["final_output"] == {"status": "ok", "accepted": True, "iterations": 2,
                                   "final_code": "def calculate_factorial(n):\n    return 2\n",
                                   "final_critique": "feedback 9", "errors": []}
    assert "feedback 5" in chat.calls[1].messages[-1]["content"]  # the refiner saw the latest critique


@pytest.mark.parametrize("budget", [1, 2, 3, 4])
def test_the_budget_stops_with_needs_review_after_exactly_budget_drafts(budget):
    chat, critic = chat_for(budget - 1), Scores(*[5] * budget)
    out = invoke(chat, critic, max_iterations=budget)
    assert out["status"] == "needs_review" and out["final_output"]["accepted"] is False
    assert out["iteration"] == budget and len(chat.calls) == budget and critic.calls == budget
    assert out["errors"] == ["max_iterations reached before acceptance"]
    assert out["current_draft"] == f"def calculate_factorial(n):\n    return {budget}\n"  # the latest draft is kept


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_blank_input_reaches_handle_failure_without_a_model_call(text):
    chat, critic = ScriptedChat({}), Scores()
    out = invoke(chat, critic, text=text)
    assert out["status"] == "failed" and chat.calls == [] and critic.calls == 0
    assert out["final_output"]["errors"] == ["blank input: give the graph a task to write code for"]
    assert as_run(out, "blank").stop.value == "blank_input"


def test_malformed_critic_output_is_invalid_recorded_and_routes_to_needs_review():
    chat, critic = chat_for(2), Scores(None)
    out = invoke(chat, critic)
    assert out["critique_status"] == "invalid" and out["status"] == "needs_review" and len(chat.calls) == 1
    assert out["raw_critic_output"] == "not json"
    assert out["errors"][0].startswith("invalid critic output at iteration 1")
    assert out["errors"][-1] == "the critic's output could not be used"


def test_a_model_error_ends_in_handle_failure_with_the_error_and_the_last_draft():
    chat = ScriptedChat({"generator": [draft(1)], "refiner": [ModelError("server down")]})
    out = invoke(chat, Scores(5, 5))
    assert out["status"] == "failed" and out["current_draft"] == "def calculate_factorial(n):\n    return 1\n"
    assert out["errors"] == ["model error in refine: server down"]


def test_iteration_counts_drafts_only_and_never_exceeds_the_budget():
    graph = build_graph(GraphParts(chat_for(2), Scores(5, 5, 5), task=TASK))
    seen = []
    for update in graph.stream(start_state(TASK.prompt(), 3), run_config(3), stream_mode="updates"):
        (node, change), = update.items()
        if "iteration" in (change or {}):
            seen.append((node, change["iteration"]))
    assert seen == [("prepare_task", 0), ("generate_initial_draft", 1), ("refine_draft", 2), ("refine_draft", 3)]


@pytest.mark.parametrize("scores, text", [((9,), None), ((5, 5, 5), None), ((None,), None), ((), "")])
def test_the_final_state_always_has_the_fields_a_caller_reads(scores, text):
    out = invoke(chat_for(2), Scores(*scores), text=text)
    for key in ("status", "final_output", "current_draft", "critique_status", "revision_history"):
        assert key in out, key
    assert set(out["final_output"]) == {"status", "accepted", "iterations", "final_code", "final_critique", "errors"}


@pytest.mark.parametrize("reply, status", [
    ("APPROVED", "accepted"),
    ("**CODE_IS_PERFECT**", "accepted"),
    ("APPROVED\n" + json.dumps({"score": 3, "issues": ["wrong for 0"], "strengths": [], "suggestion": "fix"}), "invalid"),
    ("Looks fine, APPROVED once you add a docstring.", "invalid"),
    (json.dumps({"score": 8, "issues": [], "strengths": ["ok"], "suggestion": "none"}), "accepted"),  # the threshold itself
    (json.dumps({"score": 7, "issues": ["no docstring"], "strengths": [], "suggestion": "add one"}), "needs_revision"),
    (json.dumps({"score": 4, "issues": ["no docstring"], "strengths": [], "suggestion": "add one"}), "needs_revision"),
])
def test_critic_replies_are_normalised_sentinels_included(reply, status):
    critic = LLMCritic(ScriptedChat({"critic": [reply, reply]}))
    got, _, raw = normalise(critic.evaluate(TASK, "def calculate_factorial(n):\n    return 1\n"), 8)
    assert got == status and raw == reply


def test_the_factorial_scenario_checks_the_docstring_zero_and_negative_input():
    assert task_for(TASK.prompt()).id == "factorial" and task_for("Write f(x) that doubles x.").entry_point == "f"
    lines = TASK.tests.splitlines()
    assert "assert calculate_factorial(0) == 1" in lines
    assert "with raises(ValueError):" in lines and "    calculate_factorial(-1)" in lines
    assert any("__doc__" in line for line in lines) and TASK.checks["docstring"] is True
    good = "def calculate_factorial(n):\n    \"\"\"n!\"\"\"\n    if n < 0:\n        raise ValueError(n)\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n"
    for broken in (good.replace('    \"\"\"n!\"\"\"\n', ""), good.replace("1 if n < 2", "0 if n == 0 else 1 if n < 2"),
                   good.replace("    if n < 0:\n        raise ValueError(n)\n", "")):
        assert not TASK.run(broken).passed
    assert TASK.run(good).passed


def test_the_graph_sets_its_own_recursion_limit():
    assert run_config(3)["recursion_limit"] == 12 and run_config(10, "t")["configurable"] == {"thread_id": "t"}


def human_graph(chat, critic, saver):
    return build_graph(GraphParts(chat, critic, human_review=True, task=TASK), checkpointer=saver)


@pytest.mark.parametrize("decision, status, code", [
    ({"action": "approve"}, "ok", "def calculate_factorial(n):\n    return 2\n"),
    ({"action": "edit", "code": "def calculate_factorial(n):\n    return 120\n"}, "ok", "def calculate_factorial(n):\n    return 120\n"),
    ({"action": "reject"}, "needs_review", "def calculate_factorial(n):\n    return 2\n"),
])
def test_a_paused_review_resumes_on_the_human_decision_without_another_model_call(decision, status, code):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    chat, critic = chat_for(1), Scores(5, 5)
    graph, config = human_graph(chat, critic, InMemorySaver()), run_config(2, "review-1")
    paused = graph.invoke(start_state(TASK.prompt(), 2), config)
    assert "__interrupt__" in paused and paused["__interrupt__"][0].value["draft"] == "def calculate_factorial(n):\n    return 2\n"
    calls = (len(chat.calls), critic.calls)
    out = graph.invoke(Command(resume=decision), config)
    assert (len(chat.calls), critic.calls) == calls == (2, 2)
    assert out["status"] == status and out["current_draft"] == code
    assert out["final_output"]["accepted"] is (status == "ok")


def test_a_review_paused_in_one_process_is_resumed_from_sqlite_in_another(tmp_path):
    db = str(tmp_path / "checkpoints.sqlite")

    def run(mode):
        proc = subprocess.run([sys.executable, "-m", "tests.graph_process", mode, db, "thread-7"], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])

    assert run("pause") == {"paused": True, "calls": 2}
    out = run("resume")
    assert out["calls"] == 0 and out["status"] == "ok" and out["final"]["accepted"] is True
    assert out["final"]["final_code"] == "def calculate_factorial(n):\n    return 2\n"


def test_the_graph_and_lesson_03s_loop_send_the_same_requests_and_keep_the_same_history():
    loop_chat, graph_chat = chat_for(2), chat_for(2)
    loop = scored_reflection(loop_chat, TASK, Scores(4, 6, 9), StopRule(threshold=8, max_iterations=3))
    out = invoke(graph_chat, Scores(4, 6, 9), threshold=8)
    assert [(c.role, c.messages, c.params) for c in loop_chat.calls] == [(c.role, c.messages, c.params) for c in graph_chat.calls]
    graph_history = [(e["draft"], s["score"]) for e, s in zip(out["revision_history"][::2], out["revision_history"][1::2], strict=True)]
    assert [(a.output, a.score) for a in loop.history] == graph_history
    assert loop.stop_reason == "threshold" and out["status"] == "ok"


def test_the_graph_is_a_strategy_that_returns_a_run():
    run = ReflectionGraph(lambda chat: Scores(5, 9)).run(TASK, chat_for(1))
    assert run.strategy == "graph" and run.stop.value == "accepted" and run.calls == 2
    assert [s.role for s in run.steps] == ["generator", "critic", "refiner", "critic"] and run.passed is False
