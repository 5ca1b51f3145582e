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
from reflect.model.llm import ModelError
from reflect.records import Run, Stop
from reflect.strategies.graph import (
    GraphParts,
    ReflectionGraph,
    build_graph,
    fresh_thread,
    run_config,
    start_state,
)
from reflect.strategies.graph_requirements import derive_requirements, rule_checks, task_for
from reflect.strategies.graph_state import (
    critique,
    critique_status,
    current_draft,
    iteration,
    normalise,
    reply_has_code,
)
from reflect.strategies.scored import scored_reflection
from reflect.tasks.task import get_task
from reflect.testing import ScriptedChat

ROOT = Path(__file__).resolve().parents[1]
TASK = get_task("factorial")


def code(n: int) -> str:
    """A draft that passes the factorial task's rule checks (docstring, raises ValueError) and returns n."""
    return f'def calculate_factorial(n):\n    """n!"""\n    if n < 0:\n        raise ValueError(n)\n    return {n}\n'


def draft(n: int) -> str:
    return f"```python\n{code(n)}```"


class Scores:
    """A critic that returns the scripted scores in order, and counts its calls."""

    def __init__(self, *scores):
        self.scores, self.calls = list(scores), 0

    def evaluate(self, task, code):
        self.calls += 1
        s = self.scores.pop(0)
        raw = "not json" if s is None else json.dumps({"score": s})
        return Evaluation(s, f"feedback {s}", raw=raw)


def chat_for(n_refines: int) -> ScriptedChat:
    return ScriptedChat(
        {"generator": [draft(1)], "refiner": [draft(i + 2) for i in range(n_refines)]}
    )


def invoke(chat, critic, max_iterations=3, text=None, **parts):
    graph = build_graph(GraphParts(chat, critic, task=TASK, **parts))
    return graph.invoke(
        start_state(TASK.prompt() if text is None else text, max_iterations),
        run_config(max_iterations),
    )


def kinds(state):
    """The roles of the steps that call a model or take a decision (the rule checks beside each critique
    are left out)."""
    return [s["role"] for s in state["steps"] if s["role"] != "rules"]


def run_of(state) -> Run:
    return Run.from_dict(state["run"])


def test_a_first_draft_that_is_accepted_never_enters_refine():
    chat, critic = chat_for(0), Scores(9)
    out = invoke(chat, critic)
    assert out["status"] == "ok" and out["final_output"]["accepted"] is True and iteration(out) == 1
    assert kinds(out) == ["generator", "critic"] and [c.role for c in chat.calls] == ["generator"]


def test_one_revision_then_accepted_keeps_both_attempts():
    chat, critic = chat_for(1), Scores(5, 9)
    out = invoke(chat, critic)
    assert kinds(out) == ["generator", "critic", "refiner", "critic"]
    assert run_of(out).drafts == [code(1), code(2)]
    assert out["final_output"] == {
        "status": "ok",
        "accepted": True,
        "accepted_by": "critic",
        "iterations": 2,
        "final_code": code(2),
        "final_critique": "feedback 9",
        "checks_passed": True,
        "review": None,
        "errors": [],
    }
    assert (
        "feedback 5" in chat.calls[1].messages[-1]["content"]
    )  # the refiner saw the latest critique


@pytest.mark.parametrize("budget", [1, 2, 3, 4])
def test_the_budget_stops_with_needs_review_after_exactly_budget_drafts(budget):
    chat, critic = chat_for(budget - 1), Scores(*[5] * budget)
    out = invoke(chat, critic, max_iterations=budget)
    assert out["status"] == "needs_review" and out["final_output"]["accepted"] is False
    assert iteration(out) == budget and len(chat.calls) == budget and critic.calls == budget
    assert out["errors"] == ["max_iterations reached before acceptance"]
    assert current_draft(out) == code(budget)  # the latest draft is kept


@pytest.mark.parametrize("text", ["", "   \n\t"])
def test_blank_input_reaches_handle_failure_without_a_model_call(text):
    chat, critic = ScriptedChat({}), Scores()
    out = invoke(chat, critic, text=text)
    assert out["status"] == "failed" and chat.calls == [] and critic.calls == 0
    assert out["final_output"]["errors"] == ["blank input: give the graph a task to write code for"]
    assert run_of(out).stop.value == "blank_input"


def test_malformed_critic_output_is_invalid_recorded_and_routes_to_needs_review():
    chat, critic = chat_for(2), Scores(None)
    out = invoke(chat, critic)
    assert (
        critique_status(out) == "invalid"
        and out["status"] == "needs_review"
        and len(chat.calls) == 1
    )
    assert "not json" in critique(out)  # the unusable output is kept in the critic's step
    assert out["errors"][0].startswith("invalid critic output at iteration 1")
    assert out["errors"][-1] == "the critic's output could not be used"


def test_a_model_error_ends_in_handle_failure_with_the_error_and_the_last_draft():
    chat = ScriptedChat({"generator": [draft(1)], "refiner": [ModelError("server down")]})
    out = invoke(chat, Scores(5, 5))
    assert out["status"] == "failed" and current_draft(out) == code(1)
    assert out["errors"] == ["model error in refine: server down"]


def test_iteration_counts_drafts_only_and_never_exceeds_the_budget():
    graph = build_graph(GraphParts(chat_for(2), Scores(5, 5, 5), task=TASK))
    seen, steps = [], []
    for update in graph.stream(start_state(TASK.prompt(), 3), run_config(3), stream_mode="updates"):
        ((node, change),) = update.items()
        steps += (change or {}).get("steps", [])
        if node in ("generate_initial_draft", "refine_draft"):
            seen.append((node, iteration({"steps": steps})))
    assert seen == [
        ("generate_initial_draft", 1),
        ("refine_draft", 2),
        ("refine_draft", 3),
    ]


@pytest.mark.parametrize(
    "scores, text", [((9,), None), ((5, 5, 5), None), ((None,), None), ((), "")]
)
def test_the_final_state_always_has_the_fields_a_caller_reads(scores, text):
    out = invoke(chat_for(2), Scores(*scores), text=text)
    for key in ("status", "final_output", "steps", "run"):
        assert key in out, key
    current_draft(out), critique_status(out)  # read off the steps, whatever the run did
    assert set(out["final_output"]) == {
        "status",
        "accepted",
        "accepted_by",
        "iterations",
        "final_code",
        "final_critique",
        "checks_passed",
        "review",
        "errors",
    }


@pytest.mark.parametrize(
    "reply, status",
    [
        ("APPROVED", "accepted"),
        ("**CODE_IS_PERFECT**", "accepted"),
        (
            "APPROVED\n"
            + json.dumps(
                {"score": 3, "issues": ["wrong for 0"], "strengths": [], "suggestion": "fix"}
            ),
            "invalid",
        ),
        ("Looks fine, APPROVED once you add a docstring.", "invalid"),
        (
            json.dumps({"score": 8, "issues": [], "strengths": ["ok"], "suggestion": "none"}),
            "accepted",
        ),  # the threshold itself
        (
            json.dumps(
                {"score": 7, "issues": ["no docstring"], "strengths": [], "suggestion": "add one"}
            ),
            "needs_revision",
        ),
        (
            json.dumps(
                {"score": 4, "issues": ["no docstring"], "strengths": [], "suggestion": "add one"}
            ),
            "needs_revision",
        ),
    ],
)
def test_critic_replies_are_normalised_sentinels_included(reply, status):
    critic = LLMCritic(ScriptedChat({"critic": [reply, reply]}))
    got, _, raw = normalise(critic.evaluate(TASK, code(1)), 8)
    assert got == status and raw == reply


def test_the_factorial_scenario_checks_the_docstring_zero_and_negative_input():
    assert (
        task_for(TASK.prompt()).id == "factorial"
        and task_for("Write f(x) that doubles x.").entry_point == "f"
    )
    lines = TASK.tests.splitlines()
    assert "assert calculate_factorial(0) == 1" in lines
    assert "with raises(ValueError):" in lines and "    calculate_factorial(-1)" in lines
    assert any("__doc__" in line for line in lines) and TASK.checks["docstring"] is True
    good = 'def calculate_factorial(n):\n    """n!"""\n    if n < 0:\n        raise ValueError(n)\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n'
    for broken in (
        good.replace('    """n!"""\n', ""),
        good.replace("1 if n < 2", "0 if n == 0 else 1 if n < 2"),
        good.replace("    if n < 0:\n        raise ValueError(n)\n", ""),
    ):
        assert not TASK.run(broken).passed
    assert TASK.run(good).passed


def test_the_graph_sets_its_own_recursion_limit():
    assert run_config(3)["recursion_limit"] == 12 and run_config(10, "t")["configurable"] == {
        "thread_id": "t"
    }


def human_graph(chat, critic, saver):
    return build_graph(GraphParts(chat, critic, human_review=True, task=TASK), checkpointer=saver)


@pytest.mark.parametrize(
    "decision, status, final",
    [
        ({"action": "approve"}, "ok", code(2)),
        ({"action": "edit", "code": code(120)}, "ok", code(120)),
        ({"action": "reject"}, "rejected", code(2)),
    ],
)
def test_a_paused_review_resumes_on_the_human_decision_without_another_model_call(
    decision, status, final
):
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    chat, critic = chat_for(1), Scores(5, 5)
    graph, config = human_graph(chat, critic, InMemorySaver()), run_config(2, "review-1")
    paused = graph.invoke(start_state(TASK.prompt(), 2), config)
    assert "__interrupt__" in paused and paused["__interrupt__"][0].value["draft"] == code(2)
    calls = (len(chat.calls), critic.calls)
    out = graph.invoke(Command(resume=decision), config)
    assert (len(chat.calls), critic.calls) == calls == (2, 2)
    assert out["status"] == status and current_draft(out) == final
    assert out["final_output"]["accepted"] is (status == "ok")


def test_a_review_paused_in_one_process_is_resumed_from_sqlite_in_another(tmp_path):
    db = str(tmp_path / "checkpoints.sqlite")

    def run(mode):
        proc = subprocess.run(
            [sys.executable, "-m", "tests.graph_process", mode, db, "thread-7"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout.strip().splitlines()[-1])

    assert run("pause") == {"paused": True, "calls": 2}
    out = run("resume")
    assert out["calls"] == 0 and out["status"] == "ok" and out["final"]["accepted"] is True
    assert out["final"]["final_code"] == code(2)


def test_the_graphs_stop_rule_is_acceptance_or_budget_only():
    """A drop of over 20% (6 then 4) and a draft that comes back (the refiner repeats draft 1) end lesson 03's
    loop; the graph's rule has no regression, convergence or oscillation stop, so it goes on to the third draft."""
    chat = ScriptedChat({"generator": [draft(1)], "refiner": [draft(1), draft(3)]})
    out = invoke(chat, Scores(6, 4, 9))
    assert run_of(out).drafts == [code(1), code(1), code(3)] and run_of(out).stop is Stop.ACCEPTED
    loop = scored_reflection(
        ScriptedChat({"generator": [draft(1)], "refiner": [draft(1)]}),
        TASK,
        Scores(6, 4),
        StopRule(),
    )
    assert loop.stop is Stop.REGRESSED


def test_the_graph_and_lesson_03s_loop_send_the_same_requests_and_keep_the_same_history():
    loop_chat, graph_chat = chat_for(2), chat_for(2)
    loop = scored_reflection(
        loop_chat, TASK, Scores(4, 6, 9), StopRule(threshold=8, max_iterations=3)
    )
    out = invoke(graph_chat, Scores(4, 6, 9), threshold=8)
    assert [(c.role, c.messages, c.params) for c in loop_chat.calls] == [
        (c.role, c.messages, c.params) for c in graph_chat.calls
    ]
    graph_history = [(a.code, a.score) for a in StopRule().drafts(run_of(out).steps)]
    assert [(a.code, a.score) for a in StopRule().drafts(loop.steps)] == graph_history
    assert loop.stop is Stop.ACCEPTED and out["status"] == "ok"


def test_the_graph_is_a_strategy_that_returns_a_run():
    run = ReflectionGraph(lambda chat: Scores(5, 9)).run(TASK, chat_for(1))
    assert run.strategy == "graph" and run.stop.value == "accepted" and run.calls == 2
    assert [s.role for s in run.steps if s.role != "rules"] == [
        "generator",
        "critic",
        "refiner",
        "critic",
    ] and run.passed is False


# ---- failure paths and the output's honesty (issue: what the learner reads is what the code does) ----


def test_a_reply_with_no_code_is_recorded_and_goes_to_review_not_to_the_critic():
    chat, critic = (
        ScriptedChat({"generator": ["I would write a loop that multiplies the numbers."]}),
        Scores(9),
    )
    out = invoke(chat, critic)
    assert critic.calls == 0 and out["status"] == "needs_review" and current_draft(out) is None
    assert reply_has_code(out) is False and out["final_output"]["final_code"] == ""
    assert out["errors"][0].startswith(
        "no code in the generate reply at iteration 1: I would write a loop"
    )
    assert out["final_output"]["review"]["reason"] == "the last reply held no code"
    assert run_of(out).stop.value == "no_code"


def test_an_empty_refinement_also_goes_to_review_with_the_error():
    chat, critic = (
        ScriptedChat({"generator": [draft(1)], "refiner": ["Sorry, I cannot improve it."]}),
        Scores(5),
    )
    out = invoke(chat, critic)
    assert (
        critic.calls == 1
        and kinds(out) == ["generator", "critic", "refiner"]
        and out["status"] == "needs_review"
    )
    assert out["errors"][0].startswith("no code in the refine reply at iteration 2")
    assert out["steps"][-1]["code"] == ""  # the prose reply is recorded ...
    assert (
        current_draft(out) == out["final_output"]["final_code"] == code(1)
    )  # ... and the last real draft kept
    assert (
        out["final_output"]["review"]["reason"] == "the last reply held no code"
        and run_of(out).stop.value == "no_code"
    )


def test_an_acceptance_that_a_rule_check_contradicts_goes_to_review():
    no_docstring = "```python\ndef calculate_factorial(n):\n    if n < 0:\n        raise ValueError(n)\n    return 1\n```"
    out = invoke(ScriptedChat({"generator": [no_docstring]}), Scores(9))
    assert critique_status(out) == "accepted" and out["status"] == "needs_review"
    assert (
        out["final_output"]["accepted"] is False and out["final_output"]["checks_passed"] is False
    )
    assert (
        "has no docstring" in out["final_output"]["review"]["reason"]
        and run_of(out).stop.value == "check_failed"
    )


def test_an_ad_hoc_task_is_held_only_to_the_checks_it_has_a_defined_function():
    text = "Write double(x) that returns x times two."
    out = build_graph(
        GraphParts(
            ScriptedChat({"generator": ["```python\ndef double(x):\n    return 2 * x\n```"]}),
            Scores(9),
        )
    ).invoke(start_state(text, 3), run_config(3))
    assert out["status"] == "ok" and rule_checks(out)["passed"] is True


SPEC = (
    "Write calculate_factorial(n) that accepts an integer, returns n!, has a docstring, returns 1 for 0 "
    "and raises ValueError for negative input."
)


@pytest.mark.parametrize(
    "text, source, wanted",
    [
        (
            SPEC,
            "clauses of the statement",
            [
                "accepts an integer",
                "returns n!",
                "has a docstring",
                "returns 1 for 0",
                "raises ValueError for negative input",
            ],
        ),
        (
            "Write mean(xs).\n\nRequirements:\n- return 0.0 for an empty list\n- never modify xs",
            "explicit list",
            ["return 0.0 for an empty list", "never modify xs"],
        ),
        (
            'def inc(x):\n    """Add one to x.\n    >>> inc(1)\n    2\n    """\n',
            "docstring and examples",
            ["Add one to x.", "inc(1) returns 2"],
        ),
        ("Write a function.", "none", []),
    ],
)
def test_requirements_are_derived_from_an_input_that_is_not_a_course_task(text, source, wanted):
    statement, reqs, found = derive_requirements(text)
    assert (list(reqs), found) == (wanted, source)
    assert task_for(text).requirements == tuple(wanted)


def test_the_critic_judges_against_the_derived_requirements_and_the_writer_sees_the_input_as_given():
    chat, critic = ScriptedChat({"generator": [draft(1)]}), RecordingCritic(9)
    out = build_graph(GraphParts(chat, critic)).invoke(start_state(SPEC, 3), run_config(3))
    assert out["requirements"][:2] == ["accepts an integer", "returns n!"]
    assert out["metadata"]["requirements_from"] == "clauses of the statement"
    assert chat.calls[0].messages[-1]["content"] == SPEC  # the generator's request is unchanged
    assert "Requirements:\n- accepts an integer\n- returns n!" in critic.prompts[0]


def test_supplied_requirements_override_and_reach_the_critic_even_on_a_course_task():
    critic = RecordingCritic(9)
    build_graph(GraphParts(chat_for(0), critic, task=TASK)).invoke(
        start_state(TASK.prompt(), 3, requirements=["use math.prod"]), run_config(3)
    )
    assert critic.prompts[0].endswith("Requirements:\n- use math.prod")


def test_on_a_course_task_the_critic_sees_exactly_the_tasks_prompt():
    critic = RecordingCritic(9)
    invoke(chat_for(0), critic)
    assert critic.prompts == [TASK.prompt()]


class RecordingCritic(Scores):
    """Scores that also keeps the task prompt each evaluation saw."""

    def __init__(self, *scores):
        super().__init__(*scores)
        self.prompts = []

    def evaluate(self, task, code):
        self.prompts.append(task.prompt())
        return super().evaluate(task, code)


def paused_review(chat=None, critic=None):
    from langgraph.checkpoint.memory import InMemorySaver

    chat, critic = chat or chat_for(1), critic or Scores(5, 5)
    graph, config = human_graph(chat, critic, InMemorySaver()), run_config(2, "review")
    graph.invoke(start_state(TASK.prompt(), 2), config)
    return graph, config


def resume(decision):
    from langgraph.types import Command

    graph, config = paused_review()
    return graph.invoke(Command(resume=decision), config)


def test_an_approval_says_a_human_accepted_it_and_keeps_the_critics_last_verdict():
    out = resume({"action": "approve"})[
        "final_output"
    ]  # the critic's last verdict: needs_revision (score 5)
    assert out["status"] == "ok" and out["accepted_by"] == "human"
    assert out["errors"] == ["approved over the critic's last verdict: needs_revision (feedback 5)"]
    assert out["review"] == {
        "reason": "max_iterations reached before acceptance",
        "decision": "approve",
        "decision_error": None,
        "override": None,
    }
    assert out["final_critique"].startswith("approved by a human (the rule checks pass)")


def test_an_edit_is_re_checked_and_a_failing_edit_stays_in_review():
    good = resume({"action": "edit", "code": code(120)})["final_output"]
    assert (
        good["status"] == "ok" and good["accepted_by"] == "human" and good["checks_passed"] is True
    )
    assert good["final_critique"].startswith("edited by a human (the rule checks pass)")
    assert (
        good["errors"] == []
    )  # the critic never judged the person's code: no verdict of its to keep
    bad = resume({"action": "edit", "code": "def calculate_factorial(n):\n    return 120\n"})
    assert (
        bad["status"] == "needs_review"
        and bad["final_output"]["accepted"] is False
        and "__interrupt__" in bad
    )
    assert (
        "has no docstring" in bad["errors"][-1]
        and bad["final_output"]["review"]["decision_error"] == bad["errors"][-1]
    )
    assert current_draft(bad) == code(
        2
    )  # a refused edit replaces no draft: it is recorded, not promoted
    assert bad["steps"][-1]["note"] == "human_edit (refused)" and bad["steps"][-1]["code"].endswith(
        "return 120\n"
    )


@pytest.mark.parametrize(
    "decision, status, error",
    [
        ("approve", "ok", None),
        ("reject", "rejected", None),
        ({"action": "edit"}, "needs_review", "an edit needs code"),
        ({"action": "edit", "code": "  "}, "needs_review", "an edit needs code"),
        ("ship it", "needs_review", "unknown decision 'ship it'"),
        (
            {"code": code(3)},
            "needs_review",
            "unknown decision ''",
        ),  # no action is no decision, never a rejection
    ],
)
def test_a_bare_string_decision_and_an_edit_without_code_are_handled(decision, status, error):
    out = resume(decision)
    assert out["status"] == status and current_draft(out) == code(2)
    got = out["final_output"]["review"]["decision_error"]
    assert (got is None) if error is None else got.startswith(error)


def test_a_reused_thread_accumulates_its_lists_but_the_output_reads_only_this_run():
    from langgraph.checkpoint.memory import InMemorySaver

    graph = build_graph(
        GraphParts(ScriptedChat({"generator": ["no code here", draft(1)]}), Scores(9), task=TASK),
        checkpointer=InMemorySaver(),
    )
    config = run_config(3, "same")
    first = graph.invoke(start_state(TASK.prompt(), 3), config)
    second = graph.invoke(start_state(TASK.prompt(), 3), config)
    assert first["status"] == "needs_review" and second["status"] == "ok"
    assert (
        len(kinds(second)) == 3 and len(second["errors"]) == 2
    )  # the thread keeps the first run's
    assert second["final_output"]["errors"] == [] and [
        s.role for s in run_of(second).steps if s.role != "rules"
    ] == [
        "generator",
        "critic",
    ]


def test_fresh_threads_never_repeat():
    ids = [fresh_thread("factorial") for _ in range(3)]
    assert len(set(ids)) == 3 and all(i.startswith("factorial-") for i in ids)


def test_the_graphs_critic_is_a_judge_in_the_benchmarks_confusion_table(tmp_path):
    """Its verdicts are typed like every critic's: they were once text ("needs_revision (score 4)") that
    the report's patterns did not match, and the graph's critic dropped out of the judges' table."""
    from course_bench import analysis
    from reflect.evaluation import report
    from reflect.evaluation.runner import current_rows, run_bench
    from reflect.strategies.graph import ReflectionGraph

    rows = []
    for n, scores in enumerate(((4, 9), (None,))):
        strategy = ReflectionGraph(
            critic_for=lambda chat, s=scores: Scores(*s), max_iterations=3, name="graph"
        )
        run_bench([strategy], [TASK], chat_for(1), tmp_path / f"{n}.jsonl", progress=False)
        rows += current_rows(tmp_path / f"{n}.jsonl")
    critics = [s.verdict for row in rows for s in report.run_of(row).steps if s.role == "critic"]
    assert [(v.label, v.accepted, v.score) for v in critics] == [
        ("needs_revision (score 4)", False, 4),
        ("accepted (score 9)", True, 9),
        ("invalid", None, None),
    ]
    assert analysis.confusion(rows)[
        ("graph", "critic")
    ] == {  # every draft returns a number, none the right n!
        "accepted_right": 0,
        "accepted_wrong": 1,
        "rejected_right": 0,
        "rejected_wrong": 1,
    }  # the invalid one judged nothing


# ---- a human's decision is carried out as decided, and only then (issue 38) ----


def no_docstring(n: int) -> str:
    """A draft that fails the factorial task's docstring rule."""
    return code(n).replace('    """n!"""\n', "")


def paused_on(chat, critic, max_iterations=2):
    from langgraph.checkpoint.memory import InMemorySaver

    graph, config = (
        human_graph(chat, critic, InMemorySaver()),
        run_config(max_iterations, fresh_thread("decide")),
    )
    paused = graph.invoke(start_state(TASK.prompt(), max_iterations), config)
    return graph, config, paused["__interrupt__"][0].value


def decide(graph, config, decision):
    from langgraph.types import Command

    return graph.invoke(Command(resume=decision), config)


def test_approving_a_draft_that_fails_a_rule_check_is_refused_without_an_override():
    chat = ScriptedChat(
        {
            "generator": [f"```python\n{no_docstring(1)}```"],
            "refiner": [f"```python\n{no_docstring(2)}```"],
        }
    )
    graph, config, question = paused_on(chat, Scores(5, 5))
    assert question["checks_passed"] is False and question["failed_checks"] == [
        "calculate_factorial() has no docstring"
    ]
    out = decide(graph, config, "approve")
    assert out["status"] == "needs_review" and out["final_output"]["accepted"] is False
    assert out["final_output"]["checks_passed"] is False and current_draft(out) == no_docstring(2)
    assert out["final_output"]["review"]["decision_error"].startswith(
        "the approved draft fails a rule check: calculate_factorial() has no docstring"
    )
    assert out["final_output"]["errors"][-1] == out["final_output"]["review"]["decision_error"]


def test_an_override_accepts_a_failing_draft_and_says_so_in_the_output():
    chat = ScriptedChat(
        {
            "generator": [f"```python\n{no_docstring(1)}```"],
            "refiner": [f"```python\n{no_docstring(2)}```"],
        }
    )
    graph, config, _ = paused_on(chat, Scores(5, 5))
    out = decide(
        graph, config, {"action": "approve", "override": "a docstring is not needed here"}
    )["final_output"]
    assert out["status"] == "ok" and out["accepted_by"] == "human" and out["checks_passed"] is False
    assert out["review"]["override"] == "a docstring is not needed here"
    assert out["errors"] == [
        "accepted over failing rule checks (calculate_factorial() has no docstring): a docstring is not needed here",
        "approved over the critic's last verdict: needs_revision (feedback 5)",
    ]
    assert "over failing rule checks" in out["final_critique"]


def test_approving_after_a_refiner_reply_in_prose_approves_the_last_real_draft():
    chat = ScriptedChat(
        {"generator": [draft(1)], "refiner": ["I think the code is fine as it is."]}
    )
    graph, config, question = paused_on(chat, Scores(5), max_iterations=3)
    assert question["reason"] == "the last reply held no code" and question["draft"] == code(1)
    out = decide(graph, config, "approve")
    assert (
        out["status"] == "ok"
        and out["final_output"]["final_code"] == code(1)
        and out["final_output"]["checks_passed"] is True
    )


def test_approving_when_no_reply_held_code_is_refused():
    chat = ScriptedChat({"generator": ["I would multiply the numbers from 1 to n."]})
    graph, config, question = paused_on(chat, Scores(), max_iterations=3)
    assert question["draft"] is None
    out = decide(graph, config, "approve")
    assert out["status"] == "needs_review" and out["final_output"]["accepted"] is False
    assert out["final_output"]["final_code"] == "" and out["final_output"]["review"][
        "decision_error"
    ].startswith("there is no draft to approve")


def test_a_rejection_is_its_own_outcome_not_an_undecided_review():
    undecided = invoke(chat_for(1), Scores(5, 5), max_iterations=2)
    graph, config, _ = paused_on(chat_for(1), Scores(5, 5))
    out = decide(graph, config, "reject")
    assert (
        undecided["status"] == "needs_review"
        and undecided["final_output"]["review"]["decision"] is None
    )
    assert out["status"] == "rejected" and out["final_output"]["status"] == "rejected"
    assert (
        out["final_output"]["accepted"] is False
        and out["final_output"]["review"]["decision"] == "reject"
    )
    assert out["final_output"]["errors"][-1] == "rejected by a human"
    run = run_of(out)
    assert (
        run.steps[-1].note == "human_reject"
        and "rejected by a human" in run.chosen
        and "rejected by a human" in run.error
    )


# ---- a refused decision pauses again, and the next decision on the same thread is carried out (issue 38) ----


@pytest.mark.parametrize(
    "drafts, first, problem, second, final",
    [
        (
            [no_docstring(1), no_docstring(2)],
            "approve",
            "the approved draft fails a rule check",
            {"action": "approve", "override": "documented elsewhere"},
            no_docstring(2),
        ),
        (
            [code(1), code(2)],
            {"action": "edit", "code": no_docstring(9)},
            "the edit fails a rule check",
            {"action": "edit", "code": code(9)},
            code(9),
        ),
        ([code(1), code(2)], {"action": "edit"}, "an edit needs code", "approve", code(2)),
        ([code(1), code(2)], "ship it", "unknown decision 'ship it'", "approve", code(2)),
        (
            ["I would multiply the numbers."],
            "approve",
            "there is no draft to approve",
            {"action": "edit", "code": code(4)},
            code(4),
        ),
    ],
)
def test_a_refused_decision_pauses_again_and_the_next_decision_on_the_thread_is_carried_out(
    drafts, first, problem, second, final
):
    replies = {
        "generator": [d if d.startswith("I ") else f"```python\n{d}```" for d in drafts[:1]],
        "refiner": [f"```python\n{d}```" for d in drafts[1:]],
    }
    chat, critic = ScriptedChat(replies), Scores(5, 5)
    graph, config, question = paused_on(chat, critic, max_iterations=len(drafts))
    calls = (len(chat.calls), critic.calls)
    assert question["refused"] is None
    refused = decide(graph, config, first)
    assert (
        graph.get_state(config).next == ("mark_needs_review",) and "__interrupt__" in refused
    )  # it asks again
    again = refused["__interrupt__"][0].value
    assert again["refused"].startswith(problem) and again["reason"] == question["reason"]
    assert refused["status"] == "needs_review" and refused["final_output"]["review"][
        "decision_error"
    ].startswith(problem)
    out = decide(graph, config, second)
    assert graph.get_state(config).next == () and "__interrupt__" not in out
    assert (
        out["status"] == "ok"
        and out["final_output"]["accepted_by"] == "human"
        and current_draft(out) == final
    )
    assert (
        out["final_output"]["review"]["decision_error"] is None
        and (len(chat.calls), critic.calls) == calls
    )


def test_a_run_rejected_after_a_refused_decision_states_its_review_reason_once():
    graph, config, _ = paused_on(chat_for(1), Scores(5, 5))
    decide(graph, config, "ship it")
    out = decide(graph, config, "reject")
    assert out["status"] == "rejected" and out["final_output"]["errors"] == [
        "max_iterations reached before acceptance",
        "unknown decision 'ship it': resume with one of approve, edit, reject",
        "rejected by a human",
    ]


def test_an_approval_over_an_invalid_critique_keeps_that_verdict_and_one_over_an_acceptance_keeps_none():
    graph, config, _ = paused_on(
        ScriptedChat({"generator": [draft(1)]}), Scores(None), max_iterations=3
    )
    invalid = decide(graph, config, "approve")["final_output"]
    assert invalid["status"] == "ok" and invalid["errors"] == [
        "approved over the critic's last verdict: invalid (feedback None)"
    ]
    lenient = ScriptedChat(
        {"generator": [f"```python\n{no_docstring(1)}```"]}
    )  # the critic accepts, a rule check fails
    graph, config, _ = paused_on(lenient, Scores(9), max_iterations=3)
    out = decide(graph, config, {"action": "approve", "override": "fine"})["final_output"]
    assert out["errors"] == [
        "accepted over failing rule checks (calculate_factorial() has no docstring): fine"
    ]


def test_a_graph_without_human_review_ends_at_review_even_when_its_input_carries_a_decision_error():
    out = build_graph(GraphParts(chat_for(1), Scores(5, 5), task=TASK)).invoke(
        {**start_state(TASK.prompt(), 2), "metadata": {"decision_error": "from an earlier run"}},
        run_config(2),
    )
    assert out["status"] == "needs_review" and "decision_error" not in out["metadata"]


def test_the_run_names_its_task_given_or_found_from_the_input():
    assert run_of(invoke(chat_for(0), Scores(9))).task_id == TASK.id
    found = build_graph(
        GraphParts(chat_for(0), Scores(9))
    )  # no task: the input is a course task's prompt
    assert run_of(found.invoke(start_state(TASK.prompt(), 3), run_config(3))).task_id == TASK.id
    blank = build_graph(GraphParts(chat_for(0), Scores(9))).invoke(
        start_state("  ", 3), run_config(3)
    )
    assert run_of(blank).task_id == "custom" and run_of(blank).stop is Stop.BLANK_INPUT
