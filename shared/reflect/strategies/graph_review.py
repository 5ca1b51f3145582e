"""How a run of lesson 04's graph ends: a person's review (`needs_review`: the pause, the decision, a refused
one asked again), the outcome a user reads (`final_output`) and the Run it leaves (`closing_run`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..records import Run, Step, Stop
from ..tasks.task import Task
from .graph_requirements import failed_checks, rule_checks, rules_step, static_checks
from .graph_state import critique, current_draft, iteration, steps_of, this_run

DECISIONS = ("approve", "edit", "reject")

_NO_DRAFT = "there is no draft to approve (no reply held code): edit it, or reject it"

_REVIEW_REASONS = {
    Stop.NO_CODE: "the last reply held no code",
    Stop.INVALID_CRITIC: "the critic's output could not be used",
    Stop.CHECK_FAILED: "the critic accepted a draft that fails a rule check: ",
    Stop.MAX_ITERATIONS: "max_iterations reached before acceptance",
}


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


def _review_reason(state: dict, stop: Stop) -> str:
    """Why a run needs a person, in words: its `stop`, with the failing checks."""
    checks = "; ".join(failed_checks(rule_checks(state))) if stop is Stop.CHECK_FAILED else ""
    return _REVIEW_REASONS.get(stop, f"the stop rule stopped the run: {stop.value}") + checks


def closing_run(state: dict, stop: Stop, task_id: str, name: str = "graph") -> dict:
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


def needs_review(
    state: dict,
    new_stop: Callable[[dict], Stop],
    human_review: bool,
    task_of: Callable[[dict], Task],
) -> tuple[dict, dict, Stop]:
    """The review node's work: why the run needs a person (`new_stop(state)`, recorded once; back here after a
    refused decision, the recorded one), and with `human_review` the pause for a person's decision and what it
    changes. Returns the node's update, the state after it, and the stop its Run records."""
    meta = state.get("metadata", {})
    # back here after a refused decision: the reason is recorded, and the stop it came from
    again = meta.get("review_reason") is not None
    stop = Stop(meta["review_stop"]) if again else new_stop(state)
    reason = meta["review_reason"] if again else _review_reason(state, stop)
    noted = [] if again else [reason]
    upd: dict = {
        "status": "needs_review",
        "metadata": {**meta, "review_reason": reason, "review_stop": stop.value},
        "errors": noted,
    }
    if human_review:
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
        decided = _human_decision({**state, "metadata": upd["metadata"]}, decision, task_of(state))
        upd |= decided | {"errors": [*noted, *decided.get("errors", [])]}
    merged = {key: [*state.get(key, []), *upd.get(key, [])] for key in ("errors", "steps")}
    after = {**state, **upd, **merged}
    return upd, after, Stop.ACCEPTED if upd["status"] == "ok" else stop


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


def after_review(state: dict) -> str:
    """A human decision that was refused pauses the review again; anything else ends the run."""
    refused = state.get("status") == "needs_review" and (state.get("metadata") or {}).get(
        "decision_error"
    )
    return "mark_needs_review" if refused else "__end__"
