"""Lesson 04: the reflection loop as a LangGraph graph, `reflection_code_reviewer`.

    START -> prepare_task -> generate_initial_draft -> critique_draft
    critique_draft -> finalize | refine_draft | mark_needs_review
    refine_draft -> critique_draft
    prepare_task / generate_initial_draft / refine_draft -> handle_failure

The nodes call lesson 03's step functions, so both send byte-identical requests; every node
appends its `Step` to `state["steps"]` and the router reads the stop off them. With
`human_review=True`, `mark_needs_review` pauses for a person's decision (approve, edit, reject).
How each edge, the human review and threads work: docs/package.md, "The modules in detail".
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Literal, TypedDict

from ..judging.controller import drafts_of
from ..judging.critics import Evaluation
from ..judging.sentinel import strict_sentinel
from ..model.llm import ModelError
from ..model.roles import SEED
from ..records import ChatFn, Critic, Run, Step, Stop, Verdict
from ..tasks.prompts import GENERATOR_PROMPT, REFINER_SYSTEM
from ..tasks.task import Task, course_tasks
from .base import Configured, execute, fingerprint
from .scored import critique_step, generate_step, refine_step

GRAPH_NAME = "reflection_code_reviewer"
_SENTINELS = ("APPROVED", "CODE_IS_PERFECT")
DECISIONS = ("approve", "edit", "reject")
_REVIEW_KEYS = (
    "decision_error",
    "override",
)  # one run's review, in its metadata
_NO_DRAFT = "there is no draft to approve (no reply held code): edit it, or reject it"
_CritiqueStatus = Literal["accepted", "needs_revision", "invalid"]
_ACCEPTS = {
    "accepted": True,
    "needs_revision": False,
    "invalid": None,
}  # a status as a Verdict's `accepted`
_REVIEW_REASONS = {
    Stop.NO_CODE: "the last reply held no code",
    Stop.INVALID_CRITIC: "the critic's output could not be used",
    Stop.CHECK_FAILED: "the critic accepted a draft that fails a rule check: ",
    Stop.MAX_ITERATIONS: "max_iterations reached before acceptance",
}


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


def normalise(ev: Evaluation, threshold: float) -> tuple[_CritiqueStatus, str, str | None]:
    """(status, critique text, raw output) from a critic's Evaluation.

    A sentinel reply (APPROVED, CODE_IS_PERFECT, read strictly as in lesson 02) accepts; a
    JSON score at or above `threshold` accepts, below asks for changes; no usable score is
    invalid, and so is a reply that says both (a sentinel and a score below the threshold)."""
    raw = ev.raw
    sentinel = bool(raw) and any(strict_sentinel(raw, s) for s in _SENTINELS)
    if sentinel and ev.score is not None and ev.score < threshold:
        return "invalid", f"contradictory critique: a sentinel and a score of {ev.score:g}", raw
    if sentinel:
        return "accepted", ev.feedback if ev.score is not None else "approved (sentinel)", raw
    if ev.score is None:
        return "invalid", ev.feedback, raw
    return ("accepted" if ev.score >= threshold else "needs_revision"), ev.feedback, raw


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


def this_run(state: dict, key: str) -> list:
    """This run's entries of an appending list (a reused thread also holds earlier runs')."""
    return list(state.get(key, []))[(state.get("run_start") or {}).get(key, 0) :]


def final_output(state: dict) -> dict:
    """The user-facing result (`outcome`), with the number of drafts, the last critique, the rule
    checks' verdict on the final code and the errors that remain: none when the critic accepted the
    code; when a human did, the rule checks they overrode and, for an approval, the critic's last
    verdict if it was not an acceptance."""
    ended = outcome(state)
    meta = state.get("metadata", {})
    decision, accepted_by = meta.get("human_decision"), ended["accepted_by"]
    checks = rule_checks(state) or {}
    kept = []  # what a human's acceptance went over: it stays in the output
    if accepted_by == "human" and meta.get("override"):
        kept.append(
            f"accepted over failing rule checks ({'; '.join(failed_checks(checks))}): {meta['override']}"
        )
    if accepted_by == "human" and decision == "approve":
        kept += _critic_objection(state)
    last = critique(state) or ""
    if accepted_by == "human":
        verb = "approved" if decision == "approve" else "edited"
        why = (
            "the rule checks pass"
            if checks.get("passed")
            else f"over failing rule checks: {'; '.join(failed_checks(checks))}; the reason given: {meta.get('override')}"
        )
        last = f"{verb} by a human ({why}); the critic's last critique: {last}"
    return {
        "status": ended["status"],
        "accepted": accepted_by is not None,
        "accepted_by": accepted_by,
        "iterations": iteration(state),
        "final_code": ended["final_code"],
        "final_critique": last,
        "checks_passed": checks.get("passed"),
        "review": ended["review"],
        "errors": kept if accepted_by else this_run(state, "errors"),
    }


def steps_of(state: dict) -> list[Step]:
    """This run's steps, as `Step`s."""
    return [Step.from_dict(d) for d in this_run(state, "steps")]


def _drafting(state: dict) -> list[Step]:
    return [s for s in steps_of(state) if s.role in ("generator", "refiner")]


def current_draft(state: dict) -> str | None:
    """The last draft of this run that held code (a reply in prose does not blank it), or the code a
    person's accepted decision put in its place; None before any."""
    codes = [
        s.code
        for s in steps_of(state)
        if s.code
        and s.code.strip()
        and (
            s.role in ("generator", "refiner")
            or (s.role == "human" and "refused" not in (s.note or ""))
        )
    ]
    return codes[-1] if codes else None


def iteration(state: dict) -> int:
    """How many drafts this run asked for (a reply with no code counts)."""
    return len(_drafting(state))


def reply_has_code(state: dict) -> bool | None:
    """Whether the latest generate or refine reply held code; None before the first."""
    drafts = _drafting(state)
    return bool((drafts[-1].code or "").strip()) if drafts else None


def _last_judge(state: dict) -> Step | None:
    judged = [s for s in steps_of(state) if s.verdict is not None]
    return judged[-1] if judged else None


def critique(state: dict) -> str | None:
    """The last judge's text (the critic's, or a gate's): what the refiner reads."""
    last = _last_judge(state)
    return last.reply if last else None


def critique_status(state: dict) -> _CritiqueStatus | None:
    """The last judge's verdict as a status: accepted, needs_revision or invalid (it decided nothing)."""
    last = _last_judge(state)
    if last is None:
        return None
    return {True: "accepted", False: "needs_revision", None: "invalid"}[last.verdict.accepted]


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


def outcome(state: dict) -> dict:
    """How a run ended, in one place: its status, who accepted the code (the critic, a human or
    nobody), the code, and the review when it had one (why it paused, the decision, a decision that
    could not be carried out, an override)."""
    meta = state.get("metadata", {})
    decision = meta.get("human_decision")
    status = state.get("status")
    accepted_by = (
        "human"
        if status == "ok" and decision in ("approve", "edit")
        else "critic"
        if status == "ok"
        else None
    )
    review = None
    if meta.get("review_reason"):
        review = {
            "reason": meta["review_reason"],
            "decision": decision,
            "decision_error": meta.get("decision_error"),
            "override": meta.get("override"),
        }
    return {
        "status": status,
        "accepted_by": accepted_by,
        "final_code": current_draft(state) or "",
        "review": review,
    }


def _critic_objection(state: dict) -> list[str]:
    """The critic's last verdict on this run's current draft, when it was not an acceptance (needs_revision
    or invalid), as one error line; none when the critic accepted it or never judged it."""
    critiques = [s for s in steps_of(state) if s.role == "critic"]
    if not critiques or critiques[-1].verdict.accepted:
        return []
    status = "invalid" if critiques[-1].verdict.accepted is None else "needs_revision"
    first = next((line.strip() for line in critiques[-1].reply.splitlines() if line.strip()), "")
    return [
        f"approved over the critic's last verdict: {status}"
        + (f" ({first.rstrip(':')})" if first else "")
    ]


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


def _review_reason(state: dict, stop: Stop | None = None) -> str:
    """Why a run needs a person, in words: `stop` (`_review_stop(state)` when not given), with the
    failing checks."""
    stop = stop or _review_stop(state)
    checks = "; ".join(failed_checks(rule_checks(state))) if stop is Stop.CHECK_FAILED else ""
    return _REVIEW_REASONS.get(stop, f"the stop rule stopped the run: {stop.value}") + checks


def critic_step(
    index: int,
    status: _CritiqueStatus,
    text: str,
    score: float | None = None,
    usage: tuple[int, int, int] = (0, 0, 0),
    role: str = "critic",
) -> Step:
    """A critique as a step: its status as a `Verdict` (accepted, needs_revision or invalid, with the
    score), its text as the reply; a model step when the critic called a model, else a check (a
    judge that runs code, such as lesson 04's test gate with `role="tests"`)."""
    prompt, completion, calls = usage
    verdict = Verdict(
        status + ("" if score is None else f" (score {score:g})"),
        _ACCEPTS[status],
        score,
        reason=text if status == "invalid" else "",
    )
    return Step(
        index, role, "model" if calls else "check", "", text, prompt, completion, 0.0, verdict
    )


def _closing_run(state: dict, stop: Stop, task_id: str, name: str = "graph") -> dict:
    """The Run of a run that ends here, as a dict for the state: the current draft, this run's
    steps, the stop, which draft it returns and the errors."""
    human = (
        state.get("metadata", {}).get("human_decision")
        if state.get("status") in ("ok", "rejected")
        else None
    )
    last = f"iteration {iteration(state)}"
    chosen = (
        f"the draft {'approved' if human == 'approve' else 'written'} by a human"
        if human in ("approve", "edit")
        else f"the latest draft, {last}, rejected by a human"
        if human == "reject"
        else f"the latest draft, {last} (the graph keeps the last draft that held code)"
    )
    errors = "; ".join(this_run(state, "errors")) or None
    run = Run(
        strategy=name,
        task_id=task_id,
        final_code=current_draft(state) or "",
        stop=stop,
        steps=tuple(steps_of(state)),
        chosen=chosen,
        error=errors,
    )
    return run.to_dict()


_THREADS = itertools.count(1)


def fresh_thread(prefix: str = "run") -> str:
    """A thread id no earlier run in this process used ("factorial-1", "factorial-2", ...)."""
    return f"{prefix}-{next(_THREADS)}"


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
        return p.task or task_for(state["input"], state.get("requirements"))

    def writer_task(state: dict) -> Task:
        """The task as the generator and refiner see it: a known task's prompt, or the input as given."""
        task = task_of(state)
        return (
            task
            if p.task or task.id != "custom"
            else replace(task, statement=state["input"], requirements=())
        )

    def judged_task(state: dict) -> Task:
        """The task as the critic sees it: with this run's requirements."""
        task, reqs = task_of(state), tuple(state.get("requirements") or ())
        return task if reqs == task.requirements else replace(task, requirements=reqs)

    def prepare_task(state: dict) -> dict:
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
        task = task_of(state)
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

    def ended(state: dict, stop: Stop) -> dict:
        """The Run of a run that ends here, for `state["run"]` (`_closing_run`)."""
        task_id = p.task.id if p.task else state.get("metadata", {}).get("task_id", "custom")
        return _closing_run(state, stop, task_id, p.name)

    def draft_node(kind: str) -> Callable[[dict], dict]:
        def node(state: dict) -> dict:
            task = writer_task(state)
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
        task, code = judged_task(state), current_draft(state) or ""
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
        meta = state.get("metadata", {})
        # back here after a refused decision: the reason is recorded, and the stop it came from
        again = meta.get("review_reason") is not None
        stop = Stop(meta["review_stop"]) if again else _review_stop(state)
        reason = meta["review_reason"] if again else _review_reason(state, stop)
        noted = [] if again else [reason]
        upd: dict = {
            "status": "needs_review",
            "metadata": {**meta, "review_reason": reason, "review_stop": stop.value},
            "errors": noted,
        }
        if p.human_review:
            from langgraph.types import interrupt  # no model call may come before this line

            checks = rule_checks(state) or {}
            refused = meta.get("decision_error") if again else None
            decision = interrupt(
                {
                    "question": "approve, edit or reject this draft?",
                    "reason": reason,
                    "draft": current_draft(state),
                    "critique": critique(state),
                    "checks_passed": checks.get("passed"),
                    "failed_checks": failed_checks(checks),
                    "iteration": iteration(state),
                    "refused": refused,
                }
            )
            decided = _human_decision(
                {**state, "metadata": upd["metadata"]}, decision, task_of(state)
            )
            upd |= decided | {"errors": [*noted, *decided.get("errors", [])]}
        merged = {
            key: [*state.get(key, []), *upd.get(key, [])] for key in ("errors", "steps")
        }  # as the reducers add
        after = {**state, **upd, **merged}
        return upd | {
            "final_output": final_output(after),
            "run": ended(after, Stop.ACCEPTED if upd["status"] == "ok" else stop),
        }

    def handle_failure(state: dict) -> dict:
        upd = {"status": "failed"}
        stop = Stop.PROVIDER_ERROR if (state.get("input") or "").strip() else Stop.BLANK_INPUT
        return upd | {
            "final_output": final_output({**state, **upd}),
            "run": ended({**state, **upd}, stop),
        }

    return {
        "prepare_task": prepare_task,
        "generate_initial_draft": draft_node("generate"),
        "critique_draft": critique_draft,
        "refine_draft": draft_node("refine"),
        "finalize": finalize,
        "mark_needs_review": mark_needs_review,
        "handle_failure": handle_failure,
    }


def _human_decision(state: dict, decision: Any, task: Task) -> dict:
    """What a reviewer's decision changes. `decision` is {"action": "approve" | "edit" | "reject",
    "code": ... for an edit, "override": "why" to accept despite failing rule checks}, or the action
    alone as a string.

    approve: the current draft (the last one that held code) is re-checked with the rule checks;
    it is accepted when they pass, or when the decision gives an `override` (kept in the output).
    edit: the same, on the person's code, which becomes the current draft. reject: the run ends
    `rejected`. An approval or edit that fails the checks without an override, an approval with
    no draft, an edit without code, or an unknown action is refused: it changes no draft (a
    refused edit is recorded in the history, not promoted), the run stays in review with the
    problem in `decision_error` and `errors`, and the graph pauses again for another decision."""
    if isinstance(decision, str):
        decision = {"action": decision}
    decision = decision if isinstance(decision, dict) else {}
    action = str(decision.get("action") or "").strip().lower()
    override = str(decision.get("override") or "").strip() or None
    meta = {
        **state.get("metadata", {}),
        "human_decision": action,
        "decision_error": None,
        "override": None,
    }
    draft = current_draft(state) or ""
    upd: dict = {"metadata": meta}

    def stays_in_review(problem: str) -> dict:
        meta["decision_error"] = problem
        return upd | {"errors": [problem]}

    if action not in DECISIONS:
        return stays_in_review(
            f"unknown decision {action!r}: resume with one of {', '.join(DECISIONS)}"
        )
    if action == "reject":
        return upd | {
            "status": "rejected",
            "errors": ["rejected by a human"],
            "steps": [_human_step(state, action, draft)],
        }
    code = str(decision.get("code") or "") if action == "edit" else draft
    if not code.strip():
        return stays_in_review(
            "an edit needs code: resume with {'action': 'edit', 'code': '...'}"
            if action == "edit"
            else _NO_DRAFT
        )
    checks = static_checks(task, code)
    failed = failed_checks(checks)
    what = "the approved draft" if action == "approve" else "the edit"
    if not checks["passed"] and not override:
        return stays_in_review(
            f"{what} fails a rule check: {'; '.join(failed)} "
            "(to accept it anyway, decide with an 'override' that gives the reason)"
        ) | {"steps": [_human_step(state, action, code, refused=True)]}
    decided = _human_step(state, action, code)
    after = {**state, "steps": [*state.get("steps", []), decided]}
    upd |= {"steps": [decided, rules_step(after, checks)]}
    if not checks["passed"]:
        meta["override"] = override
    return upd | {"status": "ok"}


def _human_step(state: dict, action: str, code: str, refused: bool = False) -> dict:
    """A person's decision as a step (a check, not a model call), with the code it concerns."""
    note = f"human_{action}" + (" (refused)" if refused else "")
    return Step(
        len(this_run(state, "steps")), "human", "check", "", note, code=code, note=note
    ).to_dict()


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


def _after_review(state: dict) -> str:
    """A human decision that was refused pauses the review again; anything else ends the run."""
    refused = state.get("status") == "needs_review" and (state.get("metadata") or {}).get(
        "decision_error"
    )
    return "mark_needs_review" if refused else "__end__"


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
        g.add_conditional_edges("mark_needs_review", _after_review, ["mark_needs_review", END])
    else:
        g.add_edge("mark_needs_review", END)
    return g.compile(checkpointer=checkpointer, name=GRAPH_NAME)


def run_config(max_iterations: int, thread_id: str | None = None) -> dict:
    """The config for one run: an explicit recursion limit (a second guard), and a thread id."""
    config: dict = {"recursion_limit": 2 * max_iterations + 6}
    if thread_id:
        config["configurable"] = {"thread_id": thread_id}
    return config


def start_state(
    text: str,
    max_iterations: int = 3,
    requirements: list[str] | None = None,
    metadata: dict | None = None,
) -> dict:
    """The input state for one run."""
    return {
        "input": text,
        "max_iterations": max_iterations,
        "requirements": list(requirements or []),
        "metadata": dict(metadata or {}),
        "steps": [],
        "errors": [],
    }


@dataclass
class ReflectionGraph(Configured):
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
