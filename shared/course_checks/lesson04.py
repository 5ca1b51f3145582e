"""Lesson 04's checks: the learner's own graph (the loop, its recursion limit, a person's review across a
restart), then a token budget in the package graph's router, the sandbox before the critic, escalation to a
stronger model, and a run read back from its checkpoints. All run on scripted models (no model call).

Every check builds its own graph and task (`get_task("factorial")`), so no global of the notebook
(the lesson rebinds `task` in its live sample) can change a verdict.
"""

from __future__ import annotations

import functools
import json
import operator
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypedDict
from unittest import mock

from reflect.judging.controller import StopRule
from reflect.judging.critics import Evaluation, LLMCritic, TestGroundedCritic
from reflect.model.roles import sampling
from reflect.records import Step
from reflect.strategies import graph as rg
from reflect.strategies import scored as scored_module
from reflect.tasks import prompts
from reflect.tasks.task import Task, get_task
from reflect.testing import ScriptedChat

from . import MEMORY_DISK, exercise
from .lesson02 import NEAR_SEARCH  # fails 1 of 12 visible tests: scored 9.2
from .revisions import ReviseSpy, spy_problem
from .spec import Calls, Case, Misreading, Values, Wrong, show

Chat = Callable[..., object]

GOOD = 'def calculate_factorial(n):\n    """n!"""\n    if n < 0:\n        raise ValueError(n)\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n'
BROKEN = "def calculate_factorial(n):\n    return n\n"
NEARLY_PRIME = 'def is_prime(n):\n    """Primes below 10000."""\n    return 1 < n < 10000 and all(n % k for k in range(2, n))\n'
VISIBLE_ONLY = (
    "def calculate_factorial(n):\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n"
)
DURATION_BROKEN = 'def parse_duration(text):\n    """Seconds."""\n    return 5400\n'  # fails parse_duration("45s") only
DURATION_GOOD = (
    'import re\n\n\ndef parse_duration(text):\n    """Seconds in a duration such as 1h30m."""\n'
    '    m = re.fullmatch(r"(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?", text.strip())\n'
    "    if not text.strip() or not m:\n        raise ValueError(text)\n"
    "    h, mi, s = (int(g or 0) for g in m.groups())\n    return h * 3600 + mi * 60 + s\n"
)


def drafted(n: int) -> str:
    """A factorial draft in a code fence that passes the task's rule checks (docstring, ValueError) and returns n."""
    return f'```python\ndef calculate_factorial(n):\n    """n!"""\n    if n < 0:\n        raise ValueError(n)\n    return {n}\n```'


class _Scores:
    """A critic that returns scripted scores in order and keeps the drafts it was shown."""

    def __init__(self, *scores: float) -> None:
        self.scores, self.seen = list(scores), []

    def evaluate(self, task: Task, code: str) -> Evaluation:
        self.seen.append(code)
        return Evaluation(self.scores.pop(0), "not yet" if self.scores else "fine", raw="{}")


# ---- exercise 4: route on a token budget ----


def _judged(*statuses: str) -> list[dict]:
    """A run's steps: per status, a draft (300 tokens: the generator's, then the refiner's) and the critic's
    verdict on it (250 tokens)."""
    steps = []
    for status in statuses:
        steps += [
            Step(
                len(steps),
                "generator" if not steps else "refiner",
                "model",
                prompt_tokens=100,
                completion_tokens=200,
                code=GOOD,
            ).to_dict(),
            rg.critic_step(len(steps) + 1, status, "a critique", None, (200, 50, 1)).to_dict(),
        ]
    return steps


_FAILING = {
    "passed": False,
    "checks": [{"name": "has_docstring", "passed": False, "reason": "no docstring"}],
}


def _budget_state(status: str, drafts: int, earlier: int = 0, rules: dict | None = None) -> dict:
    """A made-up state: `earlier` drafts of a reused thread's earlier run, then this run's drafts, the last one's
    critique `status` (550 tokens a draft with its critique), and the rule checks beside it if given."""
    before = _judged(*["needs_revision"] * earlier)
    state = {
        "max_iterations": 3,
        "steps": before + _judged(*[*["needs_revision"] * (drafts - 1), status]),
        "run_start": {"steps": len(before), "errors": 0},
    }
    if rules is not None:  # the rule checks recorded beside the last critique
        state["steps"] = [*state["steps"], rg.rules_step(state, rules)]
    return state


def _spent(state: dict, whole_thread: bool = False) -> int:
    steps = state["steps"] if whole_thread else rg.this_run(state, "steps")
    return sum(s.get("prompt_tokens", 0) + s.get("completion_tokens", 0) for s in steps)


def _route(
    state: dict, budget: int, strict: bool = False, whole_thread: bool = False, every: bool = False
) -> str:
    """The truth (and, with a flag, a misreading): rg.after_critique's route, except that a draft needing changes
    whose run has spent the budget goes to review."""
    route, spent = rg.after_critique(state), _spent(state, whole_thread)
    over = spent > budget if strict else spent >= budget
    return "mark_needs_review" if over and (every or route == "refine_draft") else route


_ROUTE_ROWS = (
    (("needs_revision", 1), 1000, "needs changes, 550 of 1000 spent"),
    (("needs_revision", 1), 550, "needs changes, 550 of 550 spent"),
    (("accepted", 1), 100, "accepted, 550 of 100 spent"),
    (("needs_revision", 3), 10_000, "needs changes, the last draft"),
    (("invalid", 1), 10_000, "an invalid critique"),
    (("needs_revision", 1), 500, "needs changes, 550 of 500 spent"),
    (("accepted", 1, 0, _FAILING), 100, "accepted, a rule check fails"),
    (("needs_revision", 1, 2), 1000, "needs changes, 550 of 1000 spent in this run (an earlier run on the thread spent 1100)"),
    (("needs_revision", 2), 1000, "needs changes, 1100 of 1000 spent over a draft and a revision"),
    (("needs_revision", 2), 1200, "needs changes, 1100 of 1200 spent over a draft and a revision"),
)  # fmt: skip


ROUTE = Values(
    "route_with_budget",
    [Case((_budget_state(*args), budget), note) for args, budget, note in _ROUTE_ROWS],
    oracle=_route,
    misreadings=[
        Misreading(
            lambda st, b: _route(st, b, strict=True),
            "A run that has spent exactly its budget has no tokens left: >=, not >.",
        ),
        Misreading(
            lambda st, b: _route(st, b, whole_thread=True),
            "Count this run's steps, rg.this_run(state, 'steps'): a reused thread's earlier run does not count.",
        ),
        Misreading(
            lambda st, b: _route(st, b, every=True),
            "Only a draft that needs changes is cut short: an accepted draft goes where rg.after_critique sends it, whatever it cost.",
        ),
    ],
    show=lambda v: "<state>" if isinstance(v, dict) else show(v),
)


token_budget = ROUTE.exercise(
    "04.4",
    "token_budget",
    hints=(
        "add up step['prompt_tokens'] + step['completion_tokens'] over this run's steps, rg.this_run(state, 'steps'): "
        "drafts and critiques both count, and a reused thread's earlier run does not.",
        "only a run that needs changes is cut short: an accepted draft goes where rg.after_critique sends it "
        "(to finalize, or to review when a rule check fails), whatever it cost; "
        "for everything else, return what rg.after_critique(state) returns.",
    ),
    passed="Routes on the budget first when a draft needs changes, and otherwise exactly as rg.after_critique.",
)


# ---- exercise 5: run the sandbox before the critic ----


def gated_graph(gate: Callable[[dict], dict], parts: rg.GraphParts) -> Any:
    """The package's graph with the node `gate` between every draft and the critic."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, StateGraph

    def after_draft(
        state: dict,
    ) -> str:  # a draft with code goes to the gate, not straight to the critic
        route = rg.after_draft(state)
        return "tests_gate" if route == "critique_draft" else route

    def after_gate(
        state: dict,
    ) -> str:  # the gate's verdict rejected the draft: route as after a critique; else the critic
        last = rg.steps_of(state)[-1]
        rejected = last.role == "tests" and last.verdict is not None and not last.verdict.accepted
        return rg.after_critique(state) if rejected else "critique_draft"

    builder = StateGraph(rg.ReviewState)
    for name, fn in {**rg.build_nodes(parts), "tests_gate": gate}.items():
        builder.add_node(name, fn)
    builder.add_edge(START, "prepare_task")
    builder.add_conditional_edges(
        "prepare_task", rg.after_prepare, ["generate_initial_draft", "handle_failure"]
    )
    for drafter in ("generate_initial_draft", "refine_draft"):
        builder.add_conditional_edges(
            drafter, after_draft, ["tests_gate", "mark_needs_review", "handle_failure"]
        )
    builder.add_conditional_edges(
        "tests_gate", after_gate, ["critique_draft", "refine_draft", "mark_needs_review"]
    )
    builder.add_conditional_edges(
        "critique_draft", rg.after_critique, ["finalize", "refine_draft", "mark_needs_review"]
    )
    for name in ("finalize", "mark_needs_review", "handle_failure"):
        builder.add_edge(name, END)
    return builder.compile(checkpointer=InMemorySaver())


def _gate_state(task_id: str, *drafts: str, earlier: int = 0, errors: tuple = ()) -> dict:
    """A made-up state: `earlier` judged drafts of an earlier run on the thread, then this run's drafts (the
    generator's, then the refiner's, each after a critique), the last one current."""
    before, steps = _judged(*["needs_revision"] * earlier), []
    for k, code in enumerate(drafts):
        if k:
            steps.append(rg.critic_step(len(steps), "needs_revision", "a critique", 5).to_dict())
        steps.append(
            Step(len(steps), "refiner" if k else "generator", "model", code=code).to_dict()
        )
    return {
        "input": get_task(task_id).prompt(),
        "metadata": {"task_id": task_id},
        "max_iterations": 3,
        "steps": before + steps,
        "run_start": {"steps": len(before), "errors": 0},
        "errors": list(errors),
    }


@dataclass(frozen=True)
class _Scored:
    """A state whose draft the visible tests score `score` (TestGroundedCritic.evaluate made up for the case)."""

    state: dict
    score: float


@dataclass(frozen=True)
class _InGraph:
    """A case run in `gated_graph`: the task, its first draft, the refiner's next drafts."""

    task_id: str
    first: str
    fixes: tuple[str, ...]


_NAMES = {BROKEN: "broken", GOOD: "fixed", DURATION_BROKEN: "broken", DURATION_GOOD: "fixed"}


def _graded(gate: Callable[[dict], object]) -> Callable[[object], object]:
    """What the graph reads of a node `gate`: on a state, the steps it returns (each step's index, role, decision,
    score and reply) beside any other field; on an `_InGraph` case, the run of the gated graph (the drafts the
    critic saw, how often the refiner was asked, how the run ended)."""

    def graded(case: object) -> object:
        if isinstance(case, _InGraph):
            chat = ScriptedChat(
                {
                    "generator": [f"```python\n{case.first}```"],
                    "refiner": [f"```python\n{f}```" for f in case.fixes],
                }  # fmt: skip
            )
            critic, task = _Scores(9, 9, 9), get_task(case.task_id)
            out = gated_graph(gate, rg.GraphParts(chat, critic, task=task)).invoke(
                rg.start_state(task.prompt(), 3),
                rg.run_config(3, thread_id=rg.fresh_thread("gate")),
            )
            refined = sum(c.role == "refiner" for c in chat.calls)
            return {
                "critic saw": [_NAMES[c] for c in critic.seen],
                "revisions": refined,
                "status": out.get("status"),
            }
        if isinstance(case, _Scored):  # a task with 30 visible checks, one failing
            made_up = Evaluation(
                case.score, "1 of 30 visible checks failed: - FAIL f(29)", raw=None
            )
            with mock.patch.object(TestGroundedCritic, "evaluate", lambda *_, **__: made_up):
                return graded(case.state)
        out = gate(case)
        try:  # a dict of step dicts, as rg.critic_step(...).to_dict() makes them; else what came back
            steps = [Step.from_dict(d) for d in out["steps"]]
        except Exception:  # noqa: BLE001 - the message shows it as it is
            return out
        made = [(s.index, s.role, s.verdict and s.verdict.accepted, s.verdict and s.verdict.score, s.reply)
                for s in steps]  # fmt: skip
        return {**{k: v for k, v in out.items() if k != "steps"}, "steps": made}

    return graded


def _gate(state: dict, index: str = "run", at: float = 10, **wrong: bool) -> dict:
    """The truth (lesson 04's tests gate), or one misreading of it: its step numbered by the drafts or by the
    whole thread, accepting at a lower score, decided by the hidden tests, without its score, on the first draft
    or on factorial whatever the run's task, returning the whole state."""
    from reflect.judging.hidden import judge

    task = get_task("factorial" if wrong.get("factorial") else state["metadata"]["task_id"])
    codes = [s.code for s in rg.steps_of(state) if s.code]
    code = codes[0] if wrong.get("first") else rg.current_draft(state) or ""
    ev = TestGroundedCritic().evaluate(task, code)
    accepted = judge(task, code).passed if wrong.get("hidden") else ev.score >= at
    number = {
        "run": len(rg.this_run(state, "steps")),
        "zero": 0,
        "drafts": rg.iteration(state),
        "thread": len(state["steps"]),
    }
    step = rg.critic_step(number[index], "accepted" if accepted else "needs_revision", ev.feedback,
                          None if wrong.get("unscored") else ev.score, role="tests")  # fmt: skip
    return (
        {**state, "steps": [step.to_dict()]} if wrong.get("whole") else {"steps": [step.to_dict()]}
    )


def _shown(value: object) -> str:
    if isinstance(value, dict) and "input" in value:
        return "<state>"
    if isinstance(value, _InGraph):
        return "<the gated graph>"
    if isinstance(value, _Scored):
        return "<state>"
    if isinstance(value, dict) and all(isinstance(s, tuple) for s in value.get("steps", [0])):
        steps = [
            f"(index {i}, {r!r}, accepted {a}, score {show(s)}, {show(t[:40] if isinstance(t, str) else t)})"
            for i, r, a, s, t in value["steps"]
        ]
        rest = [f"{k!r}: {show(v)}" for k, v in value.items() if k != "steps"]
        return "{" + ", ".join(rest + [f"'steps': [{', '.join(steps)}]"]) + "}"
    return show(value)


_INDEX = "Number the step by this run's steps so far, len(rg.this_run(state, 'steps'))"
_AT = "Only a score of 10, every visible test passed, goes on to the critic: failing one test of six scores above 8."
GATE = Values(
    "tests_gate",
    [Case((_gate_state(*drafts, **more),), note) for drafts, more, note in (
        (("factorial", BROKEN), {}, "a broken first draft of factorial"),
        (("factorial", GOOD), {}, "a draft passing every test"),
        (("factorial", VISIBLE_ONLY), {}, "a draft passing the visible tests, not a hidden one"),
        (("HumanEval/31", NEARLY_PRIME), {}, "an is_prime failing one visible test of six"),
        (("HumanEval/69", NEAR_SEARCH), {}, "a search failing one visible test of twelve"),
        (("factorial", BROKEN), {"earlier": 1}, "a reused thread: an earlier run left 2 steps"),
        (("factorial", BROKEN, BROKEN), {}, "a revision, after a draft and its critique"),
        (("factorial", BROKEN, GOOD), {}, "a fixed revision of a broken draft"),
        (("parse_duration", DURATION_BROKEN), {"earlier": 2}, "a broken parse_duration"),
        (("factorial", GOOD), {"errors": ("an earlier node's error",)}, "an earlier node's error"),
        (("factorial", GOOD, ""), {}, "a revision in prose after a right draft: the current draft is still that draft"),
    )] + [
        Case((_Scored(_gate_state("factorial", BROKEN), 9.7),), "a made-up task: 1 of 30 visible tests failing, 9.7"),
        Case((_InGraph("factorial", BROKEN, (GOOD, GOOD)),), "factorial: a broken draft, then a fixed one"),
        Case((_InGraph("parse_duration", DURATION_BROKEN, (DURATION_GOOD,) * 2),), "parse_duration likewise"),
    ],
    oracle=_graded(_gate),
    misreadings=[Misreading(_graded(functools.partial(_gate, **wrong)), why) for wrong, why in (
        ({"index": "drafts"}, f"{_INDEX}, not by its drafts."),
        ({"index": "zero"}, f"{_INDEX}: the draft before it is one."),
        ({"index": "thread"}, f"{_INDEX}: a reused thread's earlier run does not count."),
        *(({"at": at}, _AT) for at in (9.5, 9, 8, 7, 5)),
        ({"hidden": True}, "The gate reads the visible tests only (ev.score), as the loop will at run time."),
        ({"unscored": True}, "Pass the evaluation's score (ev.score) to rg.critic_step, so the record says it."),
        ({"first": True}, "Test the run's current draft, rg.current_draft(state), not its first."),
        ({"factorial": True}, "Read the run's own task from state['metadata']['task_id'] (get_task finds it)."),
        ({"whole": True}, "Return only the fields the node changes ({'steps': [...]}): 'errors', like 'steps', "
         "adds what a node returns to what is there, so the graph would add the state's errors again."),
    )],
    show=_shown,
)  # fmt: skip


sandbox_gate = GATE.exercise(
    "04.5",
    "sandbox_gate",
    hints=(
        "TestGroundedCritic().evaluate(task, code) returns an Evaluation: .score is 10 when every visible test passes, "
        "and .feedback quotes the failing calls.",
        "record the verdict as a step: rg.critic_step(len(rg.this_run(state, 'steps')), status, ev.feedback, ev.score, "
        "role='tests').to_dict(), with status 'accepted' at a score of 10 and 'needs_revision' below, and return it "
        "in 'steps' (a list): its feedback is the critique the refiner reads.",
    ),
    passed="The broken draft went back to the refiner with the failing call and never reached the critic; "
    "the fixed one did, and was accepted (and on a second task, the refiner read that task's failing call).",
    adapt=_graded,
)


# ---- exercise 6: escalate to a stronger model ----


def _escalate_key(small: Chat, strong: Chat, after: int) -> Chat:
    """The answer key: refiner calls after the first `after` go to strong, everything else to small."""
    refined = [0]

    def chat(messages: list, role: str = "generator", **params: Any) -> object:
        refined[0] += role == "refiner"
        return (strong if role == "refiner" and refined[0] > after else small)(
            messages, role=role, **params
        )

    return chat


def _escalated(escalating: Callable[[Chat, Chat, int], Chat]) -> Callable[..., tuple]:
    """The package's graph with a model critic (LLMCritic) on `escalating(small, strong, after)`, where small and
    strong both answer from the case's script; `runs` graphs one after the other, each on a new escalating(...)
    of the same two models: which model each call reached, and how each run ended."""

    def run(chat: Chat, after: int, runs: int = 1, reuse: bool = False) -> tuple:
        reached, ended, task = [], [], get_task("factorial")

        def model(name: str) -> Chat:
            def call(messages: list, role: str = "generator", **params: Any) -> object:
                reached.append((name, role))
                return chat(messages, role=role, **params)

            return call

        small, strong = model("small"), model("strong")
        mine = None
        for _ in range(runs):
            mine = mine if reuse and mine is not None else escalating(small, strong, after)
            if not callable(mine):
                raise Wrong(
                    f"escalating(small, strong, {after}) returned {mine!r}: return a chat function."
                )
            out = rg.build_graph(rg.GraphParts(mine, LLMCritic(mine), task=task)).invoke(
                rg.start_state(task.prompt(), 4), rg.run_config(4)
            )
            ended.append(out["status"])
        return reached, ended

    return run


def _routed(got: tuple, want: tuple) -> str | None:
    """The first call that reached the other model, and why it should not have; else how the runs ended."""
    for n, ((model, role), (should, _)) in enumerate(zip(got[0], want[0], strict=False), 1):
        if model != should:
            why = (
                "only refiner calls go to strong; the generator's and the critic's always go to small"
                if role != "refiner"
                else "every revision after the first `after` goes to strong"
                if should == "strong"
                else "the first `after` revisions stay on small: count refiner calls only, each escalating(...) on its own counter"
            )
            return f"call {n} ({role}) went to {model}, where it goes to {should}: {why}."
    return (
        None if list(got[1]) == list(want[1]) else f"the runs ended {got[1]}; expected {want[1]}."
    )


def _critiques(*scores: float | str) -> list[str]:
    """LLMCritic's replies: a JSON critique per score, a reply it must repair for a string."""
    return [s if isinstance(s, str) else json.dumps({"score": s, "issues": [], "strengths": [], "suggestion": "none"})
            for s in scores]  # fmt: skip


def _escalation(
    after: int, scores: tuple, runs: int = 1, note: str = "", reuse: bool = False
) -> Case:
    script = {"generator": [drafted(1)] * runs, "refiner": [drafted(n) for n in (2, 5, 6)] * runs,
              "critic": _critiques(*scores) * runs}  # fmt: skip
    return Case(
        (script, after),
        note or f"after={after}, critic scores {list(scores)}",
        {"runs": runs, "reuse": reuse},
    )


ESCALATE = Calls(
    "escalating",
    [
        _escalation(1, (4, 5, 6, 9)),
        _escalation(0, (4, 5, 6, 9)),
        _escalation(2, (4, 5, 6, 9)),
        _escalation(3, (4, 5, 6, 9)),
        _escalation(
            1, ("Score: 4 of 10.", 4, 6, 9), note="after=1, the first critique repaired once"
        ),
        _escalation(1, (4, 6, 9), runs=2, note="after=1, two escalating(...) on the same models, a run each"),
        _escalation(1, (4, 6, 9), runs=2, note="after=1, one escalating(...) for two runs: its count goes on",
                    reuse=True),
    ],
    key=_escalated(_escalate_key),
    result=_routed,
)  # fmt: skip


escalation = ESCALATE.exercise(
    "04.6",
    "escalation",
    hints=(
        "count the refiner calls in a variable the inner function can see (a dict, or nonlocal), and compare with `after`.",
        "generator and critic calls always go to small, and only refiner calls count; "
        "the refiner calls after the first `after` go to strong.",
    ),
    passed="The first `after` revisions stay on the small model, the next go to the strong one, "
    "whose draft the critic accepts; the critic's calls stay on the small model "
    "(checked with after from 0 to 3, twice with after=1, once over two runs, and with a critique repaired once).",
    adapt=_escalated,
)


# ---- exercise 7: read a run back from its checkpoints ----


_PATHS = {  # a run's critic scores and budget: the nodes it goes through
    ((9,), 3): ["prepare_task", "generate_initial_draft", "critique_draft", "finalize"],
    ((5, 9), 3): ["prepare_task", "generate_initial_draft", "critique_draft", "refine_draft", "critique_draft",
                  "finalize"],
    ((5, 5), 2): ["prepare_task", "generate_initial_draft", "critique_draft", "refine_draft", "critique_draft",
                  "mark_needs_review"],
    ((5,) * 5, 5): ["prepare_task", "generate_initial_draft", "critique_draft",
                    *["refine_draft", "critique_draft"] * 4, "mark_needs_review"],  # past step 10
}  # fmt: skip


def _history(scores: tuple, budget: int) -> Case:
    """The package's graph, run to its end with a checkpointer on scripted models: (graph, config)."""
    from langgraph.checkpoint.memory import InMemorySaver

    task, chat = (
        get_task("factorial"),
        ScriptedChat({"generator": [drafted(1)], "refiner": [drafted(k) for k in range(2, 7)]}),
    )
    graph = rg.build_graph(
        rg.GraphParts(chat, _Scores(*scores), task=task), checkpointer=InMemorySaver()
    )
    config = rg.run_config(budget, thread_id=f"history {scores} {budget}")
    graph.invoke(rg.start_state(task.prompt(), budget), config)
    return Case((graph, config), f"scores {list(scores)}, a budget of {budget}")


def _path(graph: Any, config: dict) -> list[str]:
    """The oracle: the path of the run on the config's thread, as the table above has it."""
    return next(
        p
        for (sc, b), p in _PATHS.items()
        if config["configurable"]["thread_id"] == f"history {sc} {b}"
    )


HISTORY = Values(
    "visited",
    [_history(*run) for run in _PATHS],
    oracle=_path,
    equal=lambda got, want: isinstance(got, (list, tuple)) and list(got) == want,
    misreadings=[
        Misreading(lambda g, c: _path(g, c)[::-1], "Your list is the run backwards: get_state_history lists the "
                   "newest snapshot first."),
        Misreading(lambda g, c: ["__start__", *_path(g, c)], "Your list holds '__start__', LangGraph's own entry "
                   "point: leave it out."),
    ],
    answer=lambda g, c: [n for snap in [*g.get_state_history(c)][::-1] for n in snap.next if n != "__start__"],
    show=lambda v: "<graph>" if hasattr(v, "get_state_history") else "<config>" if isinstance(v, dict) else show(v),
)  # fmt: skip


read_history = HISTORY.exercise(
    "04.7",
    "read_history",
    hints=(
        "get_state_history(config) is newest first: reverse it before you read it.",
        "each snapshot's .next is a tuple of the node names that ran after it; skip '__start__', and the last "
        "snapshot's .next is empty.",
    ),
    passed=(
        "Read back from the checkpoints, in the order the nodes ran (accepted at once, after a revision, and "
        "out of two budgets)."
    ),
)


# ---- the builds: the learner's own graph ----


class _Critic:
    """A critic with scripted scores (3 once the script runs out) that keeps the drafts it was shown; with
    `refuse`, any call raises (a resume must not judge again)."""

    def __init__(self, *scores: float | None, refuse: bool = False) -> None:
        self.scores, self.seen, self.refuse = list(scores), [], refuse

    def evaluate(self, task: Task, code: str) -> Evaluation:
        if not isinstance(task, Task):  # as LLMCritic and TestGroundedCritic need it
            raise TypeError(
                f"critic.evaluate was given {show(task)} for the task: give it the Task itself"
            )
        self.seen.append(code)
        if self.refuse:
            raise RuntimeError("the critic was asked again")
        score = self.scores.pop(0) if self.scores else 3
        return Evaluation(score, f"critique {len(self.seen)}: fix the edge cases", raw="{}")


def _script(task: Task | None = None, runs: int = 1) -> dict:
    """Scripted drafts returning 1, 2, ...: factorial's (which pass its rule checks), or another task's; with `runs`,
    a first draft for each run."""
    script = _one_script(task)
    return {**script, "generator": script["generator"] * runs}


def _one_script(task: Task | None) -> dict:
    if (
        task is None or task.id == "factorial"
    ):  # the first draft ends with example usage, which extract_code strips
        first = (
            drafted(1).removesuffix("```") + "\n# Example usage\nprint(calculate_factorial(5))\n```"
        )
        return {"generator": [first], "refiner": [drafted(k) for k in range(2, 9)]}
    fenced = [f"```python\ndef {task.entry_point}(x):\n    return {k}\n```" for k in range(1, 9)]
    # the first draft comes with a second version after it: the draft is the block that defines the entry point
    other = f"\nOr, shorter:\n```python\ndef {task.entry_point}(x):\n    return -1\n```"
    return {"generator": [fenced[0] + other], "refiner": fenced[1:]}


def _drafts(task: Task | None = None) -> ScriptedChat:
    return ScriptedChat(_script(task))


def _code(n: int) -> str:
    return drafted(n).removeprefix("```python\n").removesuffix("```")


LOOP_CASES = (  # (critic scores, threshold, max_iterations, what the run shows)
    ((9,), 8, 3, "the first draft accepted"),
    ((3, 9), 8, 3, "one revision, then accepted"),
    ((3, 3, 3), 8, 3, "the budget of 3 spent"),
    ((None, 5, 8), 8, 3, "an unusable critique, then a score exactly at the threshold"),
    ((3,), 8, 1, "a budget of one draft"),
    ((9, 10), 10, 3, "a threshold of 10"),
    ((3, 3, 9), 8, 3, "accepted on the last draft of the budget"),
    ((None, 3, 3), 8, 3, "an unusable critique counted against the budget"),
    ((7.8, 8.0), 8, 3, "a score just under the threshold, then one at it"),
)


def _graph_names() -> set[str]:
    return {
        n
        for n, v in vars(rg).items()
        if callable(v) and getattr(v, "__module__", "") == rg.__name__
    }


class LoopState(TypedDict):
    code: str
    feedback: str
    scores: Annotated[list, operator.add]
    status: str


def _loop_key(
    chat,
    critic,
    task,
    threshold=8,
    max_iterations=3,
    out_of_budget="__end__",
    revise=None,
    repeats=False,
):  # noqa: ANN001, E501
    """The answer key in the learner's shape: lesson 03's steps (scored.generate_step, critique_step and
    refine_step, or the `revise` given) as the nodes, routed by StopRule's acceptance, then the budget; with
    `repeats` (Build 1b), a revision that returns its draft (stripped) ends the run, status "repeated"."""
    from langgraph.graph import END, START, StateGraph

    rule = StopRule(threshold=threshold, max_iterations=max_iterations)

    def critique(state: dict) -> dict:
        ev = scored_module.critique_step(critic, task, state["code"])
        return {"scores": [ev.score], "feedback": ev.feedback}

    def route(state: dict) -> str:
        if rule.accepts(state["scores"][-1]):
            return END
        return out_of_budget if len(state["scores"]) >= max_iterations else "refine"

    builder = StateGraph(LoopState)
    builder.add_node("generate", lambda s: {"code": scored_module.generate_step(chat, task).code})
    builder.add_node("critique", critique)

    def refine(s: dict) -> dict:
        if revise is None:
            return {"code": scored_module.refine_step(chat, task, s["code"], s["feedback"]).code}
        code = revise(chat, task, s["code"], s["feedback"], len(s["scores"]) + 1)
        return {"code": code, "status": "repeated" if code.strip() == s["code"].strip() else ""}

    builder.add_node("refine", refine)
    builder.add_edge(START, "generate")
    builder.add_edge("generate", "critique")
    builder.add_conditional_edges("critique", route, ["refine", END, out_of_budget])
    if repeats:
        builder.add_conditional_edges(
            "refine", lambda s: END if s["status"] == "repeated" else "critique"
        )
    else:
        builder.add_edge("refine", "critique")
    return builder


def _invoked(builder: Any, chat: ScriptedChat, limit: int) -> dict:
    """The graph compiled once and run; run once more where the script holds a second first draft (nothing of a
    run may carry over to the next): the first run's final state."""
    graph = builder.compile()
    out = graph.invoke({"scores": []}, {"recursion_limit": limit})
    if chat.scripts.get("generator"):
        graph.invoke({"scores": []}, {"recursion_limit": limit})
    return out


def _graph_run(
    loop_builder: Callable[..., Any], chat: Chat, critic: _Critic, task: Task, **kwargs: Any
) -> dict:
    """The learner's graph (or the key's), built and run to its end, its out_of_budget exit a node that records
    'over budget': how the run ended and what the critic was shown."""
    from langgraph.graph import END, StateGraph

    builder = loop_builder(chat, critic, task, **kwargs)
    if not isinstance(builder, StateGraph):
        raise Wrong(
            f"loop_builder returned {type(builder).__name__}: return the StateGraph builder itself (not "
            "compiled); the check compiles it, and Build 3 adds a node to it."
        )
    if set(builder.nodes) != {"generate", "critique", "refine"}:
        raise Wrong(
            f"your graph's nodes are {sorted(builder.nodes)}: name them generate, critique and refine."
        )
    named = getattr(getattr(builder, "state_schema", None), "__name__", None)
    if named != "LoopState":
        raise Wrong(
            f"your graph's state is {named}: name it LoopState (the lesson's later cells build on it)."
        )
    if kwargs.get("out_of_budget", END) != END:
        builder.add_node(kwargs["out_of_budget"], lambda state: {"status": "over budget"})
        builder.add_edge(kwargs["out_of_budget"], END)
    out = _invoked(builder, chat, 4 * kwargs.get("max_iterations", 3) + 10)
    kept = "status" in getattr(getattr(builder, "state_schema", None), "__annotations__", {})
    return {
        "code": out.get("code"),
        "scores": list(out.get("scores") or []),
        "judged": critic.seen,
        "exit": out.get("status") == "over budget",
        "status kept": kept,
        "revise got": [(str(c).strip(), f, n) for c, f, n in kwargs["revise"].calls]
        if "revise" in kwargs
        else None,
    }


def _loop_result(got: dict, want: dict) -> str | None:
    handed, key = got["revise got"], want["revise got"]
    if handed != key:
        i = next((i for i, (g, w) in enumerate(zip(handed, key, strict=False)) if g != w), None)
        return (
            f"revise was called {len(handed)} times; the loop calls it {len(key)}."
            if i is None
            else f"revision {i + 1} handed revise {show(handed[i])}; the loop hands it {show(key[i])}: the draft "
            "just judged, its feedback, and the number of the draft to make, counted in the run's state (a "
            "compiled graph may run again)."
        )
    if got["judged"] != want["judged"]:
        if len(got["judged"]) == len(want["judged"]):
            return (
                f"the critic was shown {show(got['judged'][0])}; lesson 03's critic judges the code extracted "
                "from the reply (extract_code(reply.text, task.entry_point).code)."
            )
        went = "stopped after" if len(got["judged"]) < len(want["judged"]) else "went on to"
        return (
            f"your graph {went} {len(got['judged'])} judged draft(s), where the loop judges {len(want['judged'])}: "
            "it stops on a score at least the threshold, or once max_iterations drafts are judged (an unusable "
            "critique counts), and judges each new draft once."
        )
    if (got["code"], got["scores"]) != (want["code"], want["scores"]):
        return (
            f"the run ended with code {show(got['code'])} and scores {got['scores']}; expected the last draft "
            "and every critique's score, in order."
        )
    if got["exit"] != want["exit"] and not got["status kept"]:
        return (
            "the exit node's {'status': 'over budget'} was dropped: your state has no status field, and "
            "LangGraph keeps only the fields the state declares."
        )
    if got["exit"] != want["exit"]:
        return (
            f"your router took the out_of_budget exit, but the last score, {show(want['scores'][-1])}, accepts (a "
            "score equal to the threshold does too): an acceptance goes to END, even on the last draft of the budget."
            if got["exit"]
            else "your router did not take the out_of_budget exit; a run that spends "
            "its budget without an acceptance leaves by out_of_budget."
        )
    return None


LOOP = Calls(
    "loop_builder",
    [
        Case((_script(task), _Critic(*scores), task), f"{what}: scores {list(scores)}, threshold {threshold}, "
             f"budget {budget}", {"threshold": threshold, "max_iterations": budget,
                                  "out_of_budget": ("over", "spent")[k % 2]})
        for k, (scores, threshold, budget, what) in enumerate(LOOP_CASES)
        for task in [get_task("palindrome" if k >= len(LOOP_CASES) - 2 else "factorial")]
    ]
    + [
        Case((_script(None, runs=2), _Critic(3, 3, 3, 3), get_task("factorial")),
             "a revise step of your own, one compiled graph run twice",
             {"threshold": 8, "max_iterations": 2, "out_of_budget": "over", "revise": ReviseSpy("calculate_factorial")}),
        Case((_script(None), _Critic(7.5, 7, 3, 9), get_task("factorial")),
             "no threshold, budget or exit given: the defaults, 8, 3 and END"),
    ],
    key=_loop_key,
    drive=_graph_run,
    result=_loop_result,
    forbid=((scored_module, rg), {"scored_reflection"} | _graph_names(),
            "your graph ran the package's loop or graph: the nodes and the edge are yours to write."),
).register("04.1")  # fmt: skip


@exercise(
    "04.1",
    hints=(
        "the state is a TypedDict with code, feedback, scores and status; scores is Annotated[list, operator.add], "
        "so a node returns {'scores': [score]} and LangGraph appends it. generate and refine send lesson 03's "
        "requests (GENERATOR_PROMPT and the task; REFINER_SYSTEM and refine_request(task, code, feedback)) with "
        "sampling(role), and keep the extracted code; critique calls critic.evaluate(task, state['code']).",
        "after_critique returns END when the last score is not None and at least the threshold, out_of_budget when "
        "len(state['scores']) has reached max_iterations, else 'refine'. Wire START -> generate -> critique, "
        "critique -(after_critique)-> refine / END / out_of_budget, refine -> critique, and return the builder.",
    ),
)
def your_loop(loop_builder: Callable[..., Any]) -> tuple[bool, str]:
    """Build 1: the learner's graph against lesson 03's steps and stop, request by request, on nine scripted
    runs; then with a revise step of the check's own."""
    from langgraph.graph import END

    problem = LOOP.problem(loop_builder)
    if problem:
        return False, problem
    task = get_task("factorial")
    spy, critic, chat = ReviseSpy(task.entry_point), _Critic(3, 4, 9), _drafts()
    builder = loop_builder(
        chat, critic, task, threshold=8, max_iterations=3, out_of_budget="over", revise=spy
    )
    builder.add_node("over", lambda state: {"status": "over budget"})
    builder.add_edge("over", END)
    builder.compile().invoke({"scores": []}, {"recursion_limit": 30})
    feedback = [f"critique {k}: fix the edge cases" for k in (1, 2)]
    problem = spy_problem(spy, _code(1), feedback, critic.seen)
    if problem or [c.role for c in chat.calls] != ["generator"]:
        return (
            False,
            f"With revise=...: {problem or 'the graph made model calls of its own besides the first draft'}",
        )
    return (
        True,
        f"your graph sends lesson 03's requests, call for call, on {len(LOOP.cases)} scripted runs, stops where the "
        "loop stops, and revises with the step it is given.",
    )


def _smallest_limit(budget: int) -> int:
    """The smallest recursion limit with which the answer key's graph spends a budget of `budget` drafts."""
    from langgraph.errors import GraphRecursionError

    for limit in range(1, 4 * budget + 10):
        graph = _loop_key(
            _drafts(), _Critic(), get_task("factorial"), max_iterations=budget
        ).compile()
        try:
            graph.invoke({"scores": []}, {"recursion_limit": limit})
            return limit
        except GraphRecursionError:
            continue
    raise AssertionError(budget)


LIMIT = Values(
    "limit_for",
    [Case((n,), f"a budget of {n} draft(s), every one rejected") for n in range(1, 7)],
    oracle=_smallest_limit,
    equal=lambda got, want: not isinstance(got, bool) and got == want,  # 7.0 limits a run as 7 does
    show=repr,
    misreadings=[
        Misreading(
            lambda n: 2 * n,
            "That is every node a full run visits; LangGraph counts one more super-step.",
        ),
        Misreading(
            lambda n: 2 * n + 2, "That works, but one less does too: which is the smallest?"
        ),
    ],
)


recursion_limit = LIMIT.exercise(
    "04.2",
    "recursion_limit",
    hints=(
        "count the super-steps of a run that spends its whole budget: one per node that runs. How many nodes run "
        "for a budget of 1 draft? of 2? LangGraph also needs one more than that.",
        "a full run visits generate and critique once, then refine and critique once per revision: 2 * max_iterations "
        "nodes; the smallest limit that lets it finish is one more.",
    ),
    passed="the smallest limit that lets a full-budget run finish, for budgets 1 to 6: anything past it is a runaway loop.",
)


# thread -> (the person's decision, the status and the code the run ends with): an edit that keeps the draft as it
# is is still an edit
DECISIONS = {
    "approve": {"action": "approve"},
    "edit": {"action": "edit", "code": GOOD},
    "edit, the draft kept": {"action": "edit", "code": _code(3)},
    "reject": {"action": "reject"},
}


def _review_key(chat, critic, task, threshold=8, max_iterations=3):  # noqa: ANN001
    """The answer key in the learner's shape: the loop's graph, a spent budget going to a review node that asks
    once and carries out the decision."""
    from langgraph.graph import END
    from langgraph.types import interrupt

    def review(state: dict) -> dict:
        decision = interrupt({"code": state["code"], "scores": state["scores"]})
        if decision["action"] == "edit":
            return {"code": decision["code"], "status": "edited"}
        return {"status": "approved" if decision["action"] == "approve" else "rejected"}

    builder = _loop_key(chat, critic, task, threshold, max_iterations, out_of_budget="review")
    builder.add_node("review", review)
    builder.add_edge("review", END)
    return builder


def _resume_key(db_path, thread_id, decision, chat, critic, task):  # noqa: ANN001
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.types import Command

    saver = SqliteSaver(sqlite3.connect(db_path, check_same_thread=False))
    graph = _review_key(chat, critic, task).compile(checkpointer=saver)
    return graph.invoke(Command(resume=decision), {"configurable": {"thread_id": thread_id}})


def _reviewed(
    review_builder: Callable[..., Any], resume_review: Callable[..., Any], *_: object
) -> Callable:
    """A run of review_builder's graph on a SQLite file of its own, scripted drafts and critic scores: what it
    asked the person (the draft as 'code', the 'scores'), or None when it ended; given a decision, the connection
    closed, resume_review on that file with a model and a critic that refuse any call: the final status and code."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    def run(
        scores: tuple, settings: dict, task_id: str = "factorial", decision: str | None = None
    ) -> tuple:
        task, thread = get_task(task_id), f"review {decision}"
        with tempfile.TemporaryDirectory(dir=MEMORY_DISK) as folder:
            db = str(Path(folder) / "reviews.sqlite")
            conn, chat = sqlite3.connect(db, check_same_thread=False), _drafts(task)
            try:
                built = review_builder(chat, _Critic(*scores), task, **settings)
                if built is None:
                    raise Wrong("review_builder returned None: return the builder, your loop_builder's with the "
                                "review node added.")  # fmt: skip
                graph = built.compile(checkpointer=SqliteSaver(conn))
                out = graph.invoke({"scores": []}, {"configurable": {"thread_id": thread}})
            finally:
                conn.close()
            problem = _generator_problem(chat, task, f"scores {list(scores)}")
            if problem:
                raise Wrong(problem)
            if "__interrupt__" not in out:
                swallowed = "review" in graph.get_graph().nodes and out.get("status") not in (
                    None,
                    "",
                )
                if decision is not None and swallowed:  # a spent budget, a status, no pause
                    raise Wrong("your review node ran but did not pause: is interrupt() inside a try/except? It "
                                "works by raising.")  # fmt: skip
                return None, None
            asked = out["__interrupt__"][0].value
            if isinstance(asked, dict):
                asked = {
                    k: list(v) if k == "scores" and isinstance(v, tuple) else v
                    for k, v in asked.items()
                }
            if decision is None:
                return asked, None
            quiet, judge_not = ScriptedChat({}), _Critic(refuse=True)
            try:
                final = resume_review(db, thread, dict(DECISIONS[decision]), quiet, judge_not, task)
            except Exception:
                # the paused run's checkpoint was not found, or not resumed
                if quiet.calls or judge_not.seen:
                    raise Wrong("your resume started a new run (it asked for a draft or a critique): go on with "
                                "the paused one, from the same SQLite file and thread_id, by invoking "
                                "Command(resume=decision).") from None  # fmt: skip
                raise
            # the run's last checkpoint, as the resume left it
            kept = sqlite3.connect(db, check_same_thread=False)
            try:
                last = next(SqliteSaver(kept).list({"configurable": {"thread_id": thread}}), None)
            finally:
                kept.close()
            if last is not None and last.metadata.get("source") == "update":
                raise Wrong("your resume wrote the outcome itself (update_state): resume the paused run with "
                            "Command(resume=decision), so that the review node carries out the decision.")  # fmt: skip
            if isinstance(final, dict) and "__interrupt__" in final:
                raise Wrong("the run paused again instead of finishing: resume with Command(resume=decision), and "
                            "ask with interrupt() once.")  # fmt: skip
            return asked, (final or {}).get("status"), (final or {}).get("code")

    return run


def _review_shown(value: object) -> str:
    """A run as the message says it: the pause (its scores and the last line of its code), then the resume."""

    def last(code: object) -> str:
        lines = [ln.strip() for ln in str(code).splitlines() if ln.strip()]
        return repr(lines[-1] if lines else code)

    if isinstance(value, tuple) and all(
        isinstance(x, (int, float)) for x in value
    ):  # a case's scores
        return f"scores {list(value)}"
    if isinstance(value, dict) and set(value) <= {
        "threshold",
        "max_iterations",
    }:  # a case's settings
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "the defaults"
    if not (
        isinstance(value, tuple)
        and len(value) in (2, 3)
        and isinstance(value[0], (dict, type(None)))
    ):
        return show(value)
    asked = value[0]
    said = "no pause" if asked is None else (
        f"a pause asking {{'scores': {show(asked.get('scores'))}, 'code': ...{last(asked.get('code'))}}}"
        if set(asked) == {"code", "scores"} else f"a pause asking {show(asked)}"
    )  # fmt: skip
    return said + (
        f", then status {value[1]!r} and code ...{last(value[2])}" if len(value) == 3 else ""
    )


REVIEW = Values(
    "a review run",
    [Case((scores, settings, task_id, decision), note) for scores, settings, task_id, decision, note in (
        ((9,), {}, "factorial", None, "the first draft accepted: no pause"),
        ((3, 9), {}, "factorial", None, "a draft accepted on the second try: no pause"),
        ((6,), {"threshold": 5}, "factorial", None, "a threshold of 5 and a first score of 6: no pause"),
        ((3, 3), {"max_iterations": 2}, "factorial", "approve", "a budget of 2 drafts spent, then approved"),
        ((3, 3, 3), {}, "palindrome", "reject", "palindrome, its budget spent, then rejected"),
        *(((3, 3, 3), {}, "factorial", name, f"the budget spent, then {name}") for name in DECISIONS),
    )],
    oracle=_reviewed(_review_key, _resume_key),
    show=_review_shown,
)  # fmt: skip


your_review = REVIEW.exercise(
    "04.3",
    "your_review",
    hints=(
        "the review node asks once: decision = interrupt({'code': state['code'], 'scores': state['scores']}); with an "
        "'edit' it returns the person's code and status 'edited', else status 'approved' or 'rejected'. Call nothing "
        "before interrupt(): on resume the node runs again from its first line.",
        "review_builder calls loop_builder(..., out_of_budget='review'), adds the node and an edge review -> END. "
        "resume_review opens SqliteSaver(sqlite3.connect(db_path, check_same_thread=False)), compiles "
        "review_builder(chat, critic, task) with it, and invokes Command(resume=decision) on the thread's config.",
    ),
    passed="your review pauses on a spent budget, survives a new connection to the same file, and carries out "
    "approve, edit and reject with no model call.",
    adapt=_reviewed,
)


# --- Build 1b (04.8): a graph that stops when a revision comes back unchanged. -------------------------


class _Reviser:
    """A revise step with one habit, keeping the calls it gets (a ReviseSpy): "copy" hands back the draft it was
    given, reindented (the textbook refiner's habit); "new" writes a new draft each time; "new-then-copy" copies
    from the second revision; "alternate" writes A, B, A; "spaced" adds a blank line inside the draft."""

    def __init__(self, kind: str, entry_point: str) -> None:
        self.kind, self.spy = kind, ReviseSpy(entry_point)

    def __call__(self, chat, task, code, feedback, n):  # noqa: ANN001 - the revise signature
        self.spy(chat, task, code, feedback, n)
        if self.kind == "copy" or (self.kind == "new-then-copy" and n > 2):
            return "\n" + code.strip() + "\n\n"
        if (
            self.kind == "spaced"
        ):  # unchanged line by line once blank lines are skipped, not once stripped
            first, *rest = code.strip().split("\n")
            return "\n".join([first, "", *rest]) + "  \n"
        if self.kind == "alternate":  # each differs from the draft it was given
            return f"def {task.entry_point}(*args):\n    return {'AB'[n % 2]!r}\n"
        return self.spy.returned[-1]


def _repeat_run(
    repeat_builder: Callable[..., Any], chat: Chat, critic: _Critic, task: Task, **kwargs: Any
) -> dict:
    from langgraph.graph import StateGraph

    builder = repeat_builder(chat, critic, task, **kwargs)
    if not isinstance(builder, StateGraph):
        raise Wrong(
            f"repeat_builder returned {type(builder).__name__}: return the StateGraph builder."
        )
    out = _invoked(builder, chat, 40) or {}
    return {
        "repeated": out.get("status") == "repeated",
        "critiques": len(critic.seen),
        "revisions": len(kwargs["revise"].spy.calls),
        "judged": critic.seen,
        "revise got": [
            (str(code).strip(), feedback, n) for code, feedback, n in kwargs["revise"].spy.calls
        ],
    }


def _ended(got: dict, want: dict) -> str | None:
    if got == want:
        return None
    if got["judged"] != want["judged"] and len(got["judged"]) == len(want["judged"]):
        return (
            f"the critic was shown {show(got['judged'][0])}; it judges the code extracted from the reply "
            "(extract_code(reply.text, task.entry_point).code), as your loop_builder's critic does."
        )
    if got["revise got"] != want["revise got"] and len(got["revise got"]) == len(
        want["revise got"]
    ):
        bad = next(g for g, w in zip(got["revise got"], want["revise got"], strict=True) if g != w)
        return (
            f"revise was handed {show(bad)}: the draft just judged, the latest critique's feedback and the "
            "number of the draft to make, as in loop_builder."
        )
    said = [
        f"{'as repeated' if r['repeated'] else 'not as repeated'}, after {r['critiques']} critique(s) and "
        f"{r['revisions']} revision(s)"
        for r in (got, want)
    ]
    return (
        f"your graph ended {said[0]}; expected {said[1]}. A revision that returns the draft it was given "
        "(once stripped) ends the run before another critique."
    )


REPEAT = Calls(
    "repeat_builder",
    [
        Case((_script(task, runs=1 + ("twice" in what)), _Critic(*scores), task),
             f"{what}: scores {list(scores)}, budget {budget}",
             {"revise": _Reviser(kind, task.entry_point), "threshold": threshold, "max_iterations": budget})
        for what, kind, scores, threshold, budget in (
            ("a reviser that copies", "copy", (3, 3, 3), 8, 3),
            ("a reviser that writes new drafts, accepted", "new", (3, 4, 9), 8, 3),
            ("a reviser that writes new drafts, the budget spent", "new", (3, 3, 3), 8, 3),
            ("a new draft, then a copy", "new-then-copy", (3, 4, 4), 8, 4),
            ("a copy under a budget of 1", "copy", (3,), 8, 1),
            ("new drafts, at a threshold of 4", "new", (3, 4, 9), 4, 3),
            ("a reviser that copies, on palindrome", "copy", (3, 3, 3), 8, 3),
            ("a reviser that alternates two drafts, A B A", "alternate", (3, 3, 3, 3), 8, 4),
            ("a reviser that adds a blank line inside the draft", "spaced", (3, 3, 3), 8, 3),
            ("new drafts, one compiled graph run twice", "new", (3, 3, 3), 8, 2),
            ("a new draft, then a copy, one compiled graph run twice", "new-then-copy", (3, 4, 3, 4), 8, 4),
            ("an unusable critique, counted against the budget", "new", (None, 3, 3), 8, 3),
            ("an unusable critique, then a copy", "new-then-copy", (None, 3, 3), 8, 3),
        )
        for task in [get_task("palindrome" if "palindrome" in what else "factorial")]
    ],
    key=functools.partial(_loop_key, repeats=True),
    drive=_repeat_run,
    result=_ended,
)  # fmt: skip


def _generator_problem(chat: ScriptedChat, task: Task, what: str) -> str:
    """What is wrong with a graph's first request, or "": lesson 03's generator request for the run's task."""
    want = [
        {"role": "system", "content": prompts.GENERATOR_PROMPT},
        {"role": "user", "content": task.prompt()},
    ]
    first = chat.calls[0] if chat.calls else None
    if first is None or (first.role, first.messages, first.params) != (
        "generator",
        want,
        sampling("generator"),
    ):
        return (
            f"on {what}: your graph's first request was not lesson 03's generator request for the run's task "
            "(GENERATOR_PROMPT, then task.prompt(), with sampling('generator'))."
        )
    return ""


repeat_stop = REPEAT.exercise(
    "04.8",
    "repeat_stop",
    hints=(
        "the refine node knows both drafts: the one in the state and the one revise returns. Mark the state "
        "when they are the same once stripped (status 'repeated'), and let a router after refine go to END then, "
        "to critique otherwise.",
        "build it like loop_builder, but replace the edge refine -> critique with "
        "add_conditional_edges('refine', after_refine, ['critique', END]), after_refine returning END on 'repeated', else 'critique'.",
    ),
    passed=(
        f"On {len(REPEAT.cases)} scripted runs your graph stopped at a repeated draft before judging it again, "
        "and ran as your loop does otherwise."
    ),
)
