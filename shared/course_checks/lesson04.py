"""Lesson 04's exercise checks: a token budget in the router, the sandbox before the critic, escalation
to a stronger model, and a run read back from its checkpoints. All run on scripted models (no model call).

Every check builds its own graph and task (`get_task("factorial")`), so no global of the notebook
(the lesson rebinds `task` in its live sample) can change a verdict.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from reflect.judging.critics import Evaluation, LLMCritic
from reflect.records import Step
from reflect.strategies import graph as rg
from reflect.tasks.task import Task, get_task
from reflect.testing import ScriptedChat

from . import exercise

GOOD = 'def calculate_factorial(n):\n    """n!"""\n    if n < 0:\n        raise ValueError(n)\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n'
BROKEN = "def calculate_factorial(n):\n    return n\n"
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


# ---- exercise 1: route on a token budget ----


def _judged(*statuses: str) -> list[dict]:
    """A run's steps: per status, a draft (300 tokens) and the critic's verdict on it (250 tokens)."""
    steps = []
    for status in statuses:
        steps += [
            Step(
                len(steps),
                "generator",
                "model",
                prompt_tokens=100,
                completion_tokens=200,
                code=GOOD,
            ).to_dict(),
            rg.critic_step(len(steps) + 1, status, "a critique", None, (200, 50, 1)).to_dict(),
        ]
    return steps


_FAILING = {"checks": [{"name": "has_docstring", "passed": False, "reason": "no docstring"}]}
_BUDGET_CASES = [  # (the last critique's status, drafts so far, token_budget, extra state, the route): 550 tokens a draft
    ("needs_revision", 1, 1000, {}, "refine_draft"),
    ("needs_revision", 1, 550, {}, "mark_needs_review"),
    ("accepted", 1, 100, {}, "finalize"),
    ("needs_revision", 3, 10_000, {}, "mark_needs_review"),
    ("invalid", 1, 10_000, {}, "mark_needs_review"),
    ("needs_revision", 1, 500, {}, "mark_needs_review"),
    ("accepted", 1, 100, {"static_check_results": _FAILING}, "mark_needs_review"),
]
_CASE_NAMES = [
    "needs changes, 550 of 1000 spent",
    "needs changes, 550 of 550 spent",
    "accepted, 550 of 100 spent",
    "needs changes, the last draft",
    "an invalid critique",
    "needs changes, 550 of 500 spent",
    "accepted, a rule check fails",
]


@exercise(
    "04.1",
    hints=(
        "add up step['prompt_tokens'] + step['completion_tokens'] over state['steps']: drafts and critiques both count.",
        "only a run that needs changes is cut short: an accepted draft goes where rg.after_critique sends it "
        "(to finalize, or to review when a rule check fails), whatever it cost; "
        "for everything else, return what rg.after_critique(state) returns.",
    ),
)
def token_budget(route_with_budget: Callable[[dict, int], str]) -> tuple[bool, str]:
    """Exercise 1: route_with_budget on seven made-up states, against the routes rg.after_critique and the budget give."""
    wrong = []
    for (status, drafts, budget, extra, want), name in zip(_BUDGET_CASES, _CASE_NAMES, strict=True):
        state = {
            "critique_status": status,
            "iteration": drafts,
            "max_iterations": 3,
            "steps": _judged(*[*["needs_revision"] * (drafts - 1), status]),
        } | extra
        got = route_with_budget(state, budget)
        if got != want:
            wrong.append(f"{name}: expected {want!r}, got {got!r}")
    if wrong:
        more = (
            f" (and {len(wrong) - 1} more of {len(_BUDGET_CASES)} cases)" if len(wrong) > 1 else ""
        )
        return False, wrong[0] + more + "."
    return (
        True,
        "Routes on the budget first when a draft needs changes, and otherwise exactly as rg.after_critique.",
    )


# ---- exercise 2: run the sandbox before the critic ----


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


@exercise(
    "04.2",
    hints=(
        "TestGroundedCritic().evaluate(task, code) returns an Evaluation: .score is 10 when every visible test passes, "
        "and .feedback quotes the failing calls.",
        "record the verdict as a step: rg.critic_step(len(rg.this_run(state, 'steps')), status, ev.feedback, ev.score, "
        "role='tests').to_dict(), with status 'accepted' at a score of 10 and 'needs_revision' below; return it in "
        "'steps' (a list), and the feedback as 'critique' (what the refiner reads).",
    ),
)
def sandbox_gate(tests_gate: Callable[[dict], dict]) -> tuple:
    """Exercise 2: the graph with tests_gate before the critic, on factorial: a broken draft, then a fixed one;
    then on parse_duration (the gate must test the run's own task); and the score the gate records for the broken draft."""
    task = get_task("factorial")
    probe = tests_gate(
        {
            "input": task.prompt(),
            "metadata": {"task_id": task.id},
            "current_draft": BROKEN,
            "iteration": 1,
            "max_iterations": 3,
            "steps": [],
            "errors": [],
        }
    )
    if not isinstance(probe, dict):
        return (
            False,
            f"tests_gate returned {probe!r}: a node returns a dict of the fields it changes.",
        )
    recorded = [Step.from_dict(d) for d in probe.get("steps") or []]
    if len(recorded) != 1 or recorded[0].role != "tests" or recorded[0].verdict is None:
        return False, (
            "on a broken draft, tests_gate should return one step in 'steps': the tests' verdict "
            "(rg.critic_step(..., role='tests').to_dict()), which the router and the run's record read."
        )
    chat = ScriptedChat(
        {"generator": [f"```python\n{BROKEN}```"], "refiner": [f"```python\n{GOOD}```"]}
    )
    critic = _Scores(9)
    out = gated_graph(tests_gate, rg.GraphParts(chat, critic, task=task)).invoke(
        rg.start_state(task.prompt(), 3), rg.run_config(3, thread_id=rg.fresh_thread("gate"))
    )
    refiner = [c for c in chat.calls if c.role == "refiner"]
    if BROKEN in critic.seen:
        return (
            False,
            "the broken first draft reached the critic: a draft that fails a visible test must not.",
        )
    if not refiner:
        return (
            False,
            f"the broken draft was never sent back to the refiner (the run ended {out.get('status')!r}).",
        )
    if "calculate_factorial(0)" not in refiner[0].messages[-1]["content"]:
        return False, (
            "the refiner was asked to revise, but its request does not quote the failing call "
            "(calculate_factorial(0)): the critique you return is what it reads."
        )
    if critic.seen != [GOOD] or out.get("status") != "ok":
        return False, (
            f"the fixed draft should reach the critic, once, and be accepted; the critic saw {len(critic.seen)} "
            f"draft(s) and the run ended {out.get('status')!r}."
        )
    other = get_task(
        "parse_duration"
    )  # a second task: the gate must read the run's own task from its state
    chat = ScriptedChat(
        {
            "generator": [f"```python\n{DURATION_BROKEN}```"],
            "refiner": [f"```python\n{DURATION_GOOD}```"] * 3,
        }
    )
    gated_graph(tests_gate, rg.GraphParts(chat, _Scores(9, 9, 9), task=other)).invoke(
        rg.start_state(other.prompt(), 3), rg.run_config(3, thread_id=rg.fresh_thread("gate"))
    )
    refiner = [c for c in chat.calls if c.role == "refiner"]
    if not refiner or 'parse_duration("45s")' not in refiner[0].messages[-1]["content"]:
        return False, (
            "the refiner's request quotes another task's tests: read the task from "
            "state['metadata']['task_id']."
        )
    verdict = recorded[0].verdict
    if verdict.accepted is not False or verdict.score is None or verdict.score >= 10:
        return (
            False,
            (
                f"the graph ran as it should, but on a draft that fails a visible test the step tests_gate "
                f"recorded says {verdict.label!r}: record it as 'needs_revision' with the evaluation's score "
                "(below 10 for that draft), so the run's record says what the tests said."
            ),
            False,
        )
    return True, (
        "The broken draft went back to the refiner with the failing call and never reached the critic; "
        "the fixed one did, and was accepted (and on a second task, the refiner read that task's failing call)."
    )


# ---- exercise 3: escalate to a stronger model ----


@exercise(
    "04.3",
    hints=(
        "count the refiner calls in a variable the inner function can see (a dict, or nonlocal), and compare with `after`.",
        "generator and critic calls always go to small, and only refiner calls count; "
        "the refiner calls after the first `after` go to strong.",
    ),
)
def escalation(escalating: Callable[[Callable, Callable, int], Callable]) -> tuple[bool, str]:
    """Exercise 3: the graph on escalating(small, strong, after) with after = 1 (built twice) and 0, scripted models
    for both and a model critic (LLMCritic) that calls the same chat with role="critic"."""
    task = get_task("factorial")
    verdict = '{{"score": {}, "issues": [], "strengths": [], "suggestion": "none"}}'.format
    for k, after in enumerate((1, 1, 0)):
        scores = [4, 5, 9] if after == 1 else [4, 9]
        small = ScriptedChat(
            {
                "generator": [drafted(1)],
                "refiner": [drafted(2)] * 3,
                "critic": [verdict(s) for s in scores],
            }
        )
        strong = ScriptedChat({"refiner": [drafted(6)] * 3, "critic": [verdict(s) for s in scores]})
        chat = escalating(small, strong, after)
        if not callable(chat):
            return (
                False,
                f"escalating(small, strong, {after}) returned {chat!r}: it should return a chat function.",
            )
        out = rg.build_graph(rg.GraphParts(chat, LLMCritic(chat), task=task)).invoke(
            rg.start_state(task.prompt(), 3), rg.run_config(3)
        )
        want_small = (
            ["generator", "critic", "refiner", "critic", "critic"]
            if after == 1
            else ["generator", "critic", "critic"]
        )
        got_small, got_strong = [c.role for c in small.calls], [c.role for c in strong.calls]
        if (got_small, got_strong) != (want_small, ["refiner"]):
            if k == 1:
                return (
                    False,
                    "a second escalating(...) shares the first one's count: keep the counter inside escalating.",
                )
            return False, (
                f"with after={after}: small got {got_small}, strong got {got_strong}; "
                f"expected {want_small} and ['refiner']."
            )
        if out["status"] != "ok" or not out["final_output"]["final_code"].endswith("return 6\n"):
            return (
                False,
                f"with after={after}: the strong model's draft should be the one accepted; the run ended {out['status']!r}.",
            )
    return True, (
        "The first `after` revisions stay on the small model, the next go to the strong one, "
        "whose draft the critic accepts; the critic's calls stay on the small model "
        "(checked with after=1, twice, and after=0)."
    )


# ---- exercise 4: read a run back from its checkpoints ----


def path_problem(got: Any, want: list[str]) -> str:
    """What is wrong with a list of visited nodes, said without giving the right list."""
    if not isinstance(got, (list, tuple)):
        return f"visited() returned {got!r}: it should return a list of node names."
    got = list(got)
    if "__start__" in got:
        return "your list holds '__start__', LangGraph's own entry point: leave it out."
    if got == want[::-1]:
        return "your list is the run backwards: get_state_history lists the newest snapshot first."
    if len(got) != len(want):
        return f"your list has {len(got)} node(s); the run went through {len(want)}."
    i = next(k for k, (a, b) in enumerate(zip(got, want, strict=True)) if a != b)
    return f"node {i + 1} of your list is {got[i]!r}, which is not the node that ran there."


@exercise(
    "04.4",
    hints=(
        "get_state_history(config) is newest first: reverse it before you read it.",
        "each snapshot's .next is a tuple of the node names that ran after it; skip '__start__', and the last "
        "snapshot's .next is empty.",
    ),
)
def read_history(visited: Callable[[Any, dict], list[str]]) -> tuple[bool, str]:
    """Exercise 4: visited() on two runs of the package's graph with a checkpointer: one accepted after a
    revision, one that spends its budget of 2 drafts."""
    from langgraph.checkpoint.memory import InMemorySaver

    task = get_task("factorial")
    runs = {
        "one revision, accepted": (
            (5, 9),
            3,
            [
                "prepare_task",
                "generate_initial_draft",
                "critique_draft",
                "refine_draft",
                "critique_draft",
                "finalize",
            ],
        ),
        "the budget of 2 spent": (
            (5, 5),
            2,
            [
                "prepare_task",
                "generate_initial_draft",
                "critique_draft",
                "refine_draft",
                "critique_draft",
                "mark_needs_review",
            ],
        ),
    }
    for name, (scores, budget, want) in runs.items():
        chat = ScriptedChat({"generator": [drafted(1)], "refiner": [drafted(2)]})
        graph = rg.build_graph(
            rg.GraphParts(chat, _Scores(*scores), task=task), checkpointer=InMemorySaver()
        )
        config = rg.run_config(budget, thread_id=rg.fresh_thread("history"))
        graph.invoke(rg.start_state(task.prompt(), budget), config)
        got = visited(graph, config)
        if not isinstance(got, (list, tuple)) or list(got) != want:
            return False, f"on a run with {name}: {path_problem(got, want)}"
    return (
        True,
        "Read back from the checkpoints, in the order the nodes ran (one run accepted, one out of budget).",
    )
