"""What a run of lesson 04's graph must meet: its task and requirements (given, the task's own, or derived from
the text, `prepare_task`), and the rule checks recorded beside each critique (`rules_step`), which an acceptance
must pass."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from ..records import Step
from ..tasks.prompts import GENERATOR_PROMPT, REFINER_SYSTEM, fingerprint
from ..tasks.task import Task, course_tasks
from .graph_state import steps_of, this_run

GRAPH_NAME = "reflection_code_reviewer"
_REVIEW_KEYS = ("decision_error", "override")  # one run's review, in its metadata

_EXPLICIT = re.compile(r"^\s*requirements?\s*:?\s*$", re.I | re.M)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+(.+?)\s*$")
_DOCSTRING = re.compile(r'("""|\'\'\')(.*?)\1', re.S)
_EXAMPLE = re.compile(r"^\s*>>>\s*(.+?)\s*\n\s*(?!>>>)(\S.*?)\s*$", re.M)
_INLINE_EXAMPLE = re.compile(
    r"\b([A-Za-z_]\w*\([^()\n]*\))\s*(?:==|->|returns|should return|gives)\s*([^\s,;.][^,;\n]*?)(?=[,;.]?\s|$)"
)


def derive_requirements(text: str) -> tuple[str, tuple[str, ...], str]:
    """(statement, requirements, source) for a task given as text.

    The requirements are, in this order of preference: an explicit list ("Requirements:"
    followed by bullets; the statement is the text before it), else the docstring's lines and
    its `>>>` examples, else inline examples ("f(2) == 4") and the clauses of the first
    sentence after "that" ("accepts an integer, returns n! and has a docstring" gives three).
    `source` names which rule found them ("explicit list", "docstring and examples",
    "clauses of the statement", or "none")."""
    text = text.strip()
    head = _EXPLICIT.search(text)
    if head:
        bullets = [
            m.group(1) for line in text[head.end() :].splitlines() if (m := _BULLET.match(line))
        ]
        if bullets:
            return text[: head.start()].strip(), tuple(bullets), "explicit list"
    doc = _DOCSTRING.search(text)
    if doc:
        body = doc.group(2)
        lines = [ln.strip() for ln in body.split(">>>")[0].splitlines() if ln.strip()]
        examples = [f"{call} returns {result}" for call, result in _EXAMPLE.findall(body)]
        found = [" ".join(lines)] if lines else []
        if found or examples:
            return text, tuple(found + examples), "docstring and examples"
    inline = [f"{call} returns {result.strip()}" for call, result in _INLINE_EXAMPLE.findall(text)]
    sentence = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text)[0]
    after = re.split(r"\b(?:that|which)\b", sentence, maxsplit=1)
    clauses = []
    if len(after) == 2:
        parts = re.split(r",\s*(?:and\s+)?|;\s*|\s+and\s+", after[1].rstrip(" ."))
        clauses = [p.strip() for p in parts if len(p.split()) >= 2]
    found = tuple(dict.fromkeys(clauses + inline))
    return text, found, "clauses of the statement" if found else "none"


def task_for(text: str, requirements: list[str] | None = None) -> Task:
    """The course task whose prompt is `text`, or an ad-hoc task (no tests) built from it, with
    `requirements` if given, else those derived from the text (`derive_requirements`)."""
    for t in course_tasks():
        if text.strip() in (t.prompt().strip(), t.statement.strip()):
            return t
    statement, derived, _ = derive_requirements(text)
    name = re.search(r"\b([A-Za-z_]\w*)\s*\(", text)
    return Task(
        id="custom",
        entry_point=name.group(1) if name else "solution",
        statement=statement,
        tests="",
        requirements=tuple(requirements) if requirements else derived,
    )


def static_checks(task: Task, code: str) -> dict:
    """Deterministic checks of a draft: the task's rule checks (and nothing that calls a model).
    `passed` is False when a check fails or there is no code; a task with no checks passes."""
    results = task.static_checks(code) if code.strip() else []
    return {
        "passed": bool(code.strip()) and all(c.passed for c in results),
        "checks": [{"name": c.name, "passed": c.passed, "reason": c.reason} for c in results],
    }


def failed_checks(results: dict | None) -> list[str]:
    """The reasons of the rule checks that failed in `static_checks`' results (none if not run)."""
    return [c["reason"] or c["name"] for c in (results or {}).get("checks", []) if not c["passed"]]


def rule_checks(state: dict) -> dict | None:
    """The task's rule checks on the current draft (`static_checks`), as the last rules step of this
    run recorded them; None before any."""
    rules = [s for s in steps_of(state) if s.role == "rules"]
    return json.loads(rules[-1].reply) if rules else None


def rules_step(state: dict, checks: dict) -> dict:
    """The rule checks of a draft as a step (a check that judges nothing the stop rule reads: an
    acceptance they contradict goes to review), the results in its reply as JSON."""
    failed = failed_checks(checks)
    note = (
        "rule checks pass"
        if checks["passed"]
        else "rule checks fail: " + ("; ".join(failed) or "no code")
    )
    return Step(
        len(this_run(state, "steps")), "rules", "check", "", json.dumps(checks), note=note
    ).to_dict()


def task_of(state: dict, parts: Any) -> Task:
    """The run's task: the known one the graph was built with, else one built from the input."""
    return parts.task or task_for(state["input"], state.get("requirements"))


def writer_task(state: dict, parts: Any) -> Task:
    """The task as the generator and refiner see it: a known task's prompt, or the input as given."""
    task = task_of(state, parts)
    return (
        task
        if parts.task or task.id != "custom"
        else replace(task, statement=state["input"], requirements=())
    )


def judged_task(state: dict, parts: Any) -> Task:
    """The task as the critic sees it: with this run's requirements."""
    task, reqs = task_of(state, parts), tuple(state.get("requirements") or ())
    return task if reqs == task.requirements else replace(task, requirements=reqs)


def prepare_task(state: dict, p: Any) -> dict:
    """The first node: the run's task, requirements and settings in the state, or a blank input failed."""
    text = (state.get("input") or "").strip()
    carried = {
        k: v for k, v in (state.get("metadata") or {}).items() if k not in _REVIEW_KEYS
    }  # not an earlier run's review
    start = {
        "run_start": {
            "steps": len(state.get("steps", [])),
            "errors": len(state.get("errors", [])),
        },
        "run": None,
    }
    if not text:
        return start | {
            "errors": ["blank input: give the graph a task to write code for"],
            "max_iterations": state.get("max_iterations", 3),
            "status": "failed",
            "metadata": {"graph": GRAPH_NAME, **carried},
        }
    task = task_of(state, p)
    given = list(state.get("requirements") or [])
    source = (
        "given"
        if given
        else "the task's own"
        if p.task or task.id != "custom"
        else derive_requirements(text)[2]
    )
    meta = {
        "graph": GRAPH_NAME,
        "prompts": fingerprint(
            (GENERATOR_PROMPT, REFINER_SYSTEM, getattr(p.critic, "system_prompt", ""))
        ),
        "task_id": task.id,
        "critic": type(p.critic).__name__,
        "threshold": p.threshold,
        "seed": p.seed,
        "requirements_from": source,
    } | carried
    return start | {
        "input": text,
        "requirements": given or list(task.requirements),
        "max_iterations": state.get("max_iterations", 3),
        "metadata": meta,
        "status": None,
    }
