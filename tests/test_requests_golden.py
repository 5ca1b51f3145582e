"""Every request each strategy sends, pinned: the guard for refactoring the strategies without changing
a model request (a cassette, the request cache and the recorded results all key on the exact bytes).

Each strategy of the catalog, lesson 05's memory modes, lesson 06's feedback arms, the graph and the
lessons' plain functions run on scripted models whose replies take them through rejections, revisions,
samples and acceptances on two tasks. What each sent (role, messages, parameters with their JSON types)
and why it stopped is compared
with `tests/golden/requests.json`: the requests byte for byte, and of the outcome only why each run stopped, so
that rewording a verdict or a reply changes no pin. After a change that is meant to alter a request or an outcome,
rewrite the file with `GOLDEN_WRITE=1 pytest tests/test_requests_golden.py` and read its diff.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from reflect.records import Run
from reflect.tasks.task import get_task
from reflect.testing import FakeReply
from tests.reference_solutions import CORRECT

GOLDEN = Path(__file__).parent / "golden" / "requests.json"

HE0_BAD = "def has_close_elements(numbers, threshold):\n    return False\n"
HE0_GOOD = (
    "def has_close_elements(numbers, threshold):\n    for i, a in enumerate(numbers):\n"
    "        for j, b in enumerate(numbers):\n            if i != j and abs(a - b) < threshold:\n"
    "                return True\n    return False\n"
)
CODE = {
    "factorial": ("def calculate_factorial(n):\n    return n\n", CORRECT["factorial"]),
    "HumanEval/0": (HE0_BAD, HE0_GOOD),
}
TESTS = {
    "factorial": "assert calculate_factorial(0) == 1\nassert calculate_factorial(5) == 120\n"
    "assert calculate_factorial(3) == 6",
    "HumanEval/0": "assert has_close_elements([1.0, 2.0], 0.5) is False\n"
    "assert has_close_elements([1.0, 1.2], 0.5) is True",
}
CRIT = '{"score": %d, "issues": ["handle the edge case"], "strengths": ["clear"], "suggestion": "fix it"}'
EVAL = '{"score": %s, "verdict": "%s", "specific_issues": ["edge case"], "missing_elements": []}'


def fenced(code: str) -> str:
    return f"```python\n{code}```"


@dataclass
class Looping:
    """A scripted model per role that repeats its last reply once its script runs out; keeps every call."""

    scripts: dict[str, list[str]]
    calls: list[list] = field(default_factory=list)

    def __call__(self, messages, role="generator", **params):
        self.calls.append([role, [dict(m) for m in messages], params])
        script = self.scripts[role]
        text = script.pop(0) if len(script) > 1 else script[0]
        return FakeReply(
            text,
            prompt_tokens=sum(len(str(m.get("content", "")).split()) for m in messages),
            completion_tokens=len(text.split()),
            role=role,
        )


def model(task_id: str, improve: bool = True) -> Looping:
    """Bad first, good after (or bad throughout): every role the course's strategies call."""
    bad, good = (fenced(c) for c in CODE[task_id])
    drafts = [bad, good] if improve else [bad]
    return Looping(
        {
            "generator": list(drafts),
            "sampler": list(drafts),
            "refiner": [good] if improve else [bad],
            "reviewer": ["Handle negative n and say why.", "APPROVED"]
            if improve
            else ["Still wrong."],
            "critic": [CRIT % 4, CRIT % 9] if improve else [CRIT % 4, "not json at all"],
            "test_writer": [fenced(TESTS[task_id])],
            "evaluator": [EVAL % (0.3, "fail"), EVAL % (1, "pass")]
            if improve
            else [EVAL % (0.3, "fail"), "{}"],
            "reflector": ["I returned a constant; I should compare every pair."],
        }
    )


def outcome(run) -> dict:
    """What a run's pin holds beside its requests: why it stopped (never a text a rewording would change)."""
    return {"stop": run.stop.value}


def scenarios() -> dict:
    from course_bench.catalog import catalog
    from reflect.evaluation.feedback import ARMS, feedback_arms
    from reflect.judging.controller import StopRule
    from reflect.judging.critics import LLMCritic, RuleCritic
    from reflect.strategies import MakerChecker, ScoredReflection
    from reflect.strategies import graph as rg
    from reflect.strategies.maker_checker import maker_checker
    from reflect.strategies.one_shot import one_shot
    from reflect.strategies.reflexion import Reflexion, memory_experiment

    def strategy(s):
        return lambda task, chat: outcome(s.run(task, chat))

    out = {name: strategy(make()) for name, make in catalog(k=3, iterations=3).items()}
    out |= {s.name: strategy(s) for s in memory_experiment()[1:]}
    out |= {
        "maker-checker, token budget": strategy(
            MakerChecker(options={"token_budget": 200}, name="mc-budget")
        ),
        "maker-checker, each role its own view": strategy(
            MakerChecker(options={"perspective": "own"}, name="mc-own")
        ),
        "reflexion, token budget": strategy(Reflexion(token_budget=400, name="rx-budget")),
    }
    out |= {s.name: strategy(s) for s in feedback_arms(2)[len(ARMS) :]}  # replicate 1

    def graph(task, chat):
        out = {}
        for critic, threshold in ((RuleCritic(), 1), (LLMCritic(chat), 8)):
            state = rg.build_graph(
                rg.GraphParts(chat, critic, threshold=threshold, task=task)
            ).invoke(rg.start_state(task.prompt(), 3), rg.run_config(3))
            out[type(critic).__name__] = {
                "status": state.get("status"),
                "run": outcome(Run.from_dict(state["run"])),
            }
        return out

    def remembered(task, chat):
        """Reflexion with a memory across two sessions: the second's prompts carry the first's reflections."""
        import tempfile

        from reflect.memory.store import MemoryStore

        with tempfile.TemporaryDirectory() as tmp:
            store = MemoryStore(Path(tmp) / "memory.db")
            try:
                return [
                    outcome(Reflexion(store=store, session=s, max_attempts=2).run(task, chat))
                    for s in ("session-1", "session-2")
                ]
            finally:
                store.close()

    def plain(task, chat):
        first = one_shot(lambda m, role="generator", **p: chat(m, role=role, **p), task)
        loop = maker_checker(
            lambda m, role: chat(m, role=role), task.prompt(), entry_point=task.entry_point
        )
        return {"one_shot": first.passed, "maker_checker": loop.stop.value}

    return out | {
        "graph": graph,
        "functions": plain,
        "reflexion, remembered": remembered,
        "scored, lenient rule": strategy(
            ScoredReflection("llm", StopRule(threshold=5, max_iterations=3), name="scored-lenient")
        ),
    }


def observe() -> dict:
    seen = {}
    for name, go in scenarios().items():
        for task_id in CODE:
            for improve in (True, False):
                chat = model(task_id, improve)
                result = go(get_task(task_id), chat)
                seen[f"{name} | {task_id} | {'improves' if improve else 'never improves'}"] = {
                    "calls": chat.calls,
                    "outcome": result,
                }
    return json.loads(json.dumps(seen, sort_keys=True, default=str))


@pytest.fixture(scope="module")
def observed() -> dict:
    seen = observe()
    if os.environ.get("GOLDEN_WRITE"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(
            json.dumps(seen, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return seen


def golden() -> dict:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_every_scenario_is_pinned(observed):
    assert sorted(observed) == sorted(golden())


PINNED = sorted(golden()) if GOLDEN.exists() else []


@pytest.mark.parametrize("key", PINNED)
def test_the_requests_are_the_pinned_bytes(observed, key):
    sent, pinned = observed[key]["calls"], golden()[key]["calls"]
    for i, (a, b) in enumerate(zip(sent, pinned, strict=False)):
        assert a == b, f"{key}: call {i} ({b[0]}) differs from the pinned request"
    assert len(sent) == len(pinned), f"{key}: {len(sent)} calls, pinned {len(pinned)}"


@pytest.mark.parametrize("key", PINNED)
def test_the_outcomes_are_the_pinned_ones(observed, key):
    assert observed[key]["outcome"] == golden()[key]["outcome"]
