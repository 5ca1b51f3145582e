"""Lesson 02's exercise checks: the learner's APPROVED reading, maker-checker loop, token budget and evidence reviewer
(graded against the package's loop on scripted agents, request by request), then false approvals, a trimmed thread
and a rule in the reviewer's prompt."""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable, Mapping, Sequence

from reflect.judging.critics import TestGroundedCritic
from reflect.judging.hidden import judge_the_judge
from reflect.records import Run, Stop
from reflect.strategies.maker_checker import maker_checker
from reflect.tasks.extract import extract_code
from reflect.tasks.prompts import REVIEWER_PROMPT
from reflect.tasks.task import Task, course_tasks, get_task
from reflect.testing import FakeReply, ScriptedChat

from . import exercise, offline, package_calls, short
from .revisions import revision_problem, sampling_problem

Chat = Callable[..., object]
REAL_CALL = (
    "called the real model (conn.chat, or the lesson's `chat`) instead of the `chat` it was given; the "
    "check stopped that call before it was sent (it tries your function without a model)."
)

SORTED_DRAFT = '```python\ndef merge_sorted_lists(list1, list2):\n    """Merge two sorted lists."""\n    return sorted(list1 + list2)\n```'
MERGE_DRAFT = (
    '```python\ndef merge_sorted_lists(list1, list2):\n    """Merge two sorted lists in one pass."""\n    i = j = 0\n    out = []\n'
    "    while i < len(list1) and j < len(list2):\n        if list1[i] <= list2[j]:\n            out.append(list1[i])\n            i += 1\n"
    "        else:\n            out.append(list2[j])\n            j += 1\n    return out + list1[i:] + list2[j:]\n```"
)


# --- The builds: each graded against the package's answer key on scripted agents. ---------------

maker_checker_module = importlib.import_module("reflect.strategies.maker_checker")  # the answer key
CHECK_TASK = "fibonacci"  # the scripted agents' task in the loop checks
WRONG = "```python\ndef fibonacci(n):\n    return n\n```"
BETTER = "```python\ndef fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n```"
RIGHT = "```python\ndef fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n```"
ALMOST = "```python\ndef fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a if n != 10 else 0\n```"  # fails 1 of 4 visible checks
ECHO = "[Reviewer]: APPROVED"  # a generator turn with no code, as section 4's thread shows

# The APPROVED reading (02.1): (review, approved?) under the statement's rule. Cases where two
# readings of the statement could differ (the order of stripping marks and periods) are left out.
READINGS: tuple[tuple[str, bool], ...] = (
    ("APPROVED", True),
    ("APPROVED.", True),
    ("APPROVED!", True),
    ("**APPROVED**", True),
    ("`APPROVED`", True),
    ("## APPROVED", True),
    ("_APPROVED_", True),
    ("\n   APPROVED   \n", True),
    ("APPROVED\nThe loop is clean and handles n = 0.", True),
    ("", False),
    ("   \n  ", False),
    ("Approved", False),
    ("approved.", False),
    ("APPROVED? Not quite: the tail of list2 is dropped.", False),
    ("Not APPROVED yet: handle empty lists.", False),
    ("The code will be APPROVED once you add type hints.", False),
    ("APPROVED with one change: rename x.", False),
    ("APPROVED. The code is clean.", False),
    ("NOT APPROVED", False),
    ("[Reviewer]: APPROVED", False),
    ("Looks good.\nAPPROVED", False),
    ("APPROVEDD", False),
    ("!APPROVED", False),
    ("...APPROVED", False),
)


@exercise(
    "02.1",
    hints=(
        "find the first line that is not blank (review.splitlines(), skipping lines that are only spaces); "
        "no such line means no approval.",
        "strip that line of spaces, then of the marks *, _, ` and # at its two ends, then of a final . or !; "
        "it approves only if what is left == 'APPROVED'.",
    ),
)
def approved_reading(approved: Callable[[str], object]) -> tuple[bool, str]:
    """Exercise 1: the learner's reading on a table of reviews, against the statement's rule."""
    wrong = []
    for text, truth in READINGS:
        got = approved(text)
        if not isinstance(got, bool):
            return False, f"approved({text!r}) returned {got!r}: return True or False."
        if got != truth:
            wrong.append((text, truth))
    if wrong:
        text, truth = wrong[0]
        more = f" ({len(wrong) - 1} more review(s) read wrongly)" if len(wrong) > 1 else ""
        return False, f"approved({text!r}) should be {truth}{more}."
    return True, f"Your reading agrees with the rule on all {len(READINGS)} reviews of the table."


def _script(reviews: Sequence[object], drafts: Sequence[object] = ()) -> dict[str, list]:
    """A scripted generator (WRONG, then BETTER, then RIGHT, unless drafts are given) and reviewer."""
    drafts = list(drafts) or [WRONG, BETTER, RIGHT, RIGHT]
    return {"generator": list(drafts), "reviewer": list(reviews)}


# The loop (02.2): (what the case is, script, max_iterations); the truth is the package's loop.
LOOP_CASES: tuple[tuple[str, dict, int], ...] = (
    ("a reviewer who approves at once", _script(["APPROVED"]), 4),
    ("a rejection, then APPROVED", _script(["Handle n = 1.", "APPROVED"]), 4),
    ("a reviewer who never approves", _script(["Wrong for n = 2."] * 4), 4),
    (
        "reviews that only look like approvals, then **APPROVED**",
        _script(
            ["APPROVED? Not yet: n = 2 is wrong.", "Not APPROVED: use a loop.", "**APPROVED**"]
        ),
        4,
    ),
    ("a generator turn with no code", _script(["Fix n = 2.", "Still wrong."], [RIGHT, ECHO]), 2),
    ("max_iterations=1", _script(["Wrong."]), 1),
)


def _first_difference(ours: Sequence, theirs: Sequence) -> str:
    """ "" when the learner's loop sent exactly what the package's sent; else the first difference."""
    for n, (want, got) in enumerate(zip(ours, theirs, strict=False), 1):
        if got.role != want.role:
            return f"call {n} went to the {got.role!r} role, where the loop calls the {want.role!r} here."
        if got.messages == want.messages:
            continue
        if len(got.messages) != len(want.messages):
            return (
                f"call {n} ({want.role}) sent {len(got.messages)} message(s), expected {len(want.messages)}: "
                f"{[m.get('role') for m in want.messages]} (the role's system prompt, then the whole thread)."
            )
        for i, (w, g) in enumerate(zip(want.messages, got.messages, strict=True)):
            if g != w:
                return (
                    f"call {n} ({want.role}), message {i}: expected {{'role': {w['role']!r}, 'content': "
                    f"{short(w['content'])}}}, got {{'role': {g.get('role')!r}, 'content': "
                    f"{short(g.get('content'))}}}."
                )
    if len(theirs) != len(ours):
        roles = [c.role for c in ours]
        return f"your loop made {len(theirs)} call(s); the loop makes {len(ours)}: {roles}."
    return ""


REASONS = {"accepted": "approved", "token_budget": "budget"}


def _outcome(got: object, run: Run, entry_point: str) -> str:
    """ "" when (draft, approved, reason) matches the package's Run; else what differs."""
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        return f"returned {short(got)}: return a tuple (draft, approved, reason)."
    draft, approved, reason = got
    want_reason = REASONS.get(run.stop.value, run.stop.value)
    reason = REASONS.get(
        str(getattr(reason, "value", reason)), str(getattr(reason, "value", reason))
    )
    if reason != want_reason:
        return f"returned the reason {reason!r}; the loop stopped with {want_reason!r}."
    if approved not in (True, False) or bool(approved) != run.accepted:
        return f"returned approved={approved!r}; the loop's last review says {run.accepted}."
    code = extract_code(str(draft or ""), entry_point).code
    if code.strip() != run.final_code.strip():
        return (
            f"returned the draft {short(draft, 50)}; expected the last draft that holds code, "
            f"{short(run.final_code, 50)}."
        )
    return ""


def _compare(
    loop: Callable[..., object], cases: Sequence, package: Callable[..., Run], call
) -> str:
    """Run the learner's loop and the package's on the same scripts; "" or the first difference."""
    task = get_task(CHECK_TASK)
    for what, script, arg in cases:
        ours, theirs = ScriptedChat(copy.deepcopy(script)), ScriptedChat(copy.deepcopy(script))
        run = package(ours, task, arg)
        try:
            used, (reached, got) = package_calls(
                lambda theirs=theirs, arg=arg: offline(lambda: call(loop, theirs, task, arg)),
                maker_checker_module,
            )
        except IndexError as err:
            if "no more replies" not in str(err):
                raise
            return (
                f"On scripted agents ({what}): your loop asked for more turns than the loop makes "
                f"({[c.role for c in ours.calls]}): does it stop where it should (on an approval, after max_iterations rounds, before a call the budget cannot afford)?"
            )
        if reached:
            return f"your loop {REAL_CALL}"
        if "maker_checker" in used:
            return "your function called the package's maker_checker: the loop is yours to write."
        problem = _first_difference(ours.calls, theirs.calls) or _outcome(
            got, run, task.entry_point
        )
        if problem:
            return f"On scripted agents ({what}): {problem}"
    return ""


def _package_loop(chat: ScriptedChat, task: Task, max_iterations: int) -> Run:
    return maker_checker(
        chat, task.prompt(), entry_point=task.entry_point, max_iterations=max_iterations
    )


@exercise(
    "02.2",
    hints=(
        "keep one list, the thread, starting with the task as a user message. Each call sends "
        "[{'role': 'system', 'content': <that role's prompt>}, *thread]; each reply joins the thread as "
        "{'role': 'assistant', 'content': f'[Generator]: {reply.text}'} (or '[Reviewer]: ').",
        "a for loop over range(max_iterations): the generator's call, then the reviewer's; return as soon as "
        "approved(review.text). Keep the last draft that holds code (extract_code(reply.text, task.entry_point)); "
        "after the loop, return it with False and 'max_iterations'.",
    ),
)
def loop(maker_checker_loop: Callable[..., object]) -> tuple[bool, str]:
    """Exercise 2: the learner's loop against the package's, request by request, on scripted agents."""
    problem = _compare(
        maker_checker_loop, LOOP_CASES, _package_loop, lambda f, c, t, n: f(c, t, max_iterations=n)
    )
    if problem:
        return False, problem
    return True, (
        f"On {len(LOOP_CASES)} scripted runs your loop sent every request the package's maker_checker sends, "
        "in order, and returned the same draft, verdict and reason."
    )


def _costly(reviews: Sequence[str], gen: tuple[int, int], rev: tuple[int, int]) -> dict[str, list]:
    drafts = [WRONG, BETTER, RIGHT, RIGHT]
    return {
        "generator": [FakeReply(d, *gen) for d in drafts],
        "reviewer": [FakeReply(r, *rev) for r in reviews],
    }


# The budget (02.3): (what, script with token counts, budget); the truth is maker_checker(token_budget=).
BUDGET_CASES: tuple[tuple[str, dict, int], ...] = (
    ("a budget that is never reached", _costly(["No."] * 4, (100, 50), (120, 30)), 10_000),
    ("a budget reached by the calls made", _costly(["No."] * 4, (100, 50), (120, 30)), 600),
    ("the next generator call would pass it", _costly(["No."] * 4, (100, 50), (120, 30)), 500),
    ("the next reviewer call would pass it", _costly(["No."] * 4, (100, 50), (300, 100)), 700),
    ("an approval within the budget", _costly(["No.", "APPROVED"], (100, 50), (120, 30)), 700),
    ("a budget smaller than one call", _costly(["No."] * 4, (100, 50), (120, 30)), 40),
    (
        "a generator whose second call costs less than its first",
        {
            "generator": [
                FakeReply(WRONG, 300, 100),
                FakeReply(BETTER, 50, 20),
                FakeReply(RIGHT, 50, 20),
            ],
            "reviewer": [FakeReply("No.", 50, 10)] * 3,
        },
        900,
    ),
)


def _package_budget(chat: ScriptedChat, task: Task, budget: int) -> Run:
    return maker_checker(chat, task.prompt(), entry_point=task.entry_point, token_budget=budget)


@exercise(
    "02.3",
    hints=(
        "count used = the prompt_tokens + completion_tokens of every reply so far, and keep each role's "
        "largest call so far (0 before its first call).",
        "before each call: if used >= budget, or used + that role's largest call so far > budget, return the "
        "last draft with code, False and 'budget'. Everything else is your loop of exercise 2.",
    ),
)
def budget(budget_loop: Callable[..., object]) -> tuple[bool, str]:
    """Exercise 3: the learner's budgeted loop against maker_checker(token_budget=...) on scripted agents."""
    problem = _compare(budget_loop, BUDGET_CASES, _package_budget, lambda f, c, t, b: f(c, t, b))
    if problem:
        return False, problem
    return True, (
        f"On {len(BUDGET_CASES)} scripted budgets your loop stopped where the package's does, before the call "
        "that would pass the budget, and returned the same draft."
    )


def _visible_review(evaluation) -> str:  # noqa: ANN001 - the test critic's Evaluation
    """Build 4's review of a draft: APPROVED when every visible check passes (score 10), else the failures."""
    return "APPROVED" if evaluation.score == 10 else evaluation.feedback


NEAR_MERGE = (  # fails 1 of merge_sorted's 5 visible checks: the critic scores it 8.2
    "```python\ndef merge_sorted_lists(list1, list2):\n    out = list(list1) + list(list2)\n"
    "    for i in range(1, len(out)):\n        j = i\n        while j > 0 and out[j - 1] > out[j]:\n"
    "            out[j - 1], out[j] = out[j], out[j - 1]\n            j -= 1\n"
    "    return out[:-1] if len(out) == 6 else out\n```"
)
EVIDENCE_CASES = (  # (task, the generator's drafts, drafts the loop writes before it is approved)
    (CHECK_TASK, [WRONG, ALMOST + "\n\nIt loops n times.", RIGHT, RIGHT], 3),  # prose after a fence
    ("merge_sorted", [NEAR_MERGE, MERGE_DRAFT], 2),
    (
        CHECK_TASK,
        ["```python\ndef fibonacci(n)\n    return n\n```", RIGHT],
        2,
    ),  # a draft that does not load
)


def _evidence_problem(evidence_chat: Callable[..., object]) -> str:
    """ "" when evidence_chat answers the reviewer with the visible checks and passes the rest on unchanged."""
    critic = TestGroundedCritic()
    for task_id, drafts, n_drafts in EVIDENCE_CASES:
        task, inner, asked = get_task(task_id), ScriptedChat({"generator": list(drafts)}), []
        evidence = evidence_chat(inner, task)

        def front(messages, role, evidence=evidence, asked=asked, **params):
            asked.append((role, [dict(m) for m in messages], params))
            return evidence(messages, role=role, **params)

        reached, run = offline(
            lambda front=front, task=task: maker_checker(
                front, task.prompt(), entry_point=task.entry_point
            )
        )
        if reached:
            return f"evidence_chat {REAL_CALL}"
        if any(c.role != "generator" for c in inner.calls):
            return "the reviewer's turn reached the chat you were given: it should run the visible checks instead."
        if [(c.role, c.messages, c.params) for c in inner.calls] != [
            a for a in asked if a[0] == "generator"
        ]:
            return "a generator call was changed on its way: evidence_chat passes every other role's call on as it comes."
        for review in run.judgements:
            draft = run.steps[review.index - 1].code or ""
            evaluation = critic.evaluate(task, draft)
            want = _visible_review(evaluation)
            if review.reply != want:
                return (
                    f"on the draft {short(draft, 40)} the review was {short(review.reply)}; expected "
                    f"{short(want)} (the visible checks' feedback, or APPROVED when all of them pass)."
                )
            if review.prompt_tokens or review.completion_tokens:
                return (
                    "the review is not a model call: reply with 0 prompt and 0 completion tokens."
                )
        if run.stop is not Stop.ACCEPTED or len(run.drafts) != n_drafts:
            return (
                f"on {task_id}, drafts that fail visible checks, then a right one, the loop should stop accepted "
                f"after {n_drafts} drafts, not {run.stop.value} after {len(run.drafts)}."
            )
    return ""


@exercise(
    "02.4",
    hints=(
        "evidence_chat returns a function (messages, role). For every role but 'reviewer' it returns "
        "chat(messages, role); the reviewer's turn makes no model call.",
        "for the reviewer: the draft is the code in the last message, without its '[Generator]: ' prefix "
        "(extract_code(messages[-1]['content'].removeprefix('[Generator]: '), task.entry_point).code); evaluation = TestGroundedCritic().evaluate(task, code); reply "
        "FakeReply('APPROVED' if evaluation.score == 10 else evaluation.feedback, 0, 0).",
    ),
)
def evidence(evidence_chat: Callable[..., object]) -> tuple[bool, str]:
    """Exercise 4: an evidence reviewer, inside the package's loop, on a scripted generator."""
    problem = _evidence_problem(evidence_chat)
    if problem:
        return False, problem
    return True, (
        "The reviewer's turn is the visible checks: it rejected the wrong draft and the nearly right one "
        "with their failing checks, and approved the fix."
    )


def _said(approved: bool) -> str:
    return "approved" if approved else "rejected"


def _probe_problem(probe: Callable[[Chat, str, str], object]) -> str:
    """ "" when `probe` runs one iteration on merge_sorted with the draft scripted and the reviewer prompt it is
    given, on a scripted reviewer that approves once and then asks for a change; else what is wrong."""
    task = get_task("merge_sorted")
    reviews = ScriptedChat({"reviewer": ["APPROVED", "Not yet: merge in one pass."]})
    roles: list[str] = []

    def scripted(messages: list[dict], role: str = "generator", **params: object) -> object:
        roles.append(role)
        if role != "reviewer":  # a probe should never ask the chat for the draft
            return FakeReply(
                "```python\ndef merge_sorted_lists(list1, list2):\n    return []\n```", 0, 0
            )
        return reviews(messages, role=role, **params)

    reached, runs = offline(
        lambda: [probe(scripted, "RULE-X", SORTED_DRAFT), probe(scripted, "RULE-X", SORTED_DRAFT)]
    )
    if reached:
        return f"probe {REAL_CALL}"
    if not all(isinstance(r, Run) for r in runs):
        return f"probe returned {type(runs[0]).__name__}: return the loop's result, what maker_checker returns."
    if roles != ["reviewer", "reviewer"]:
        return (
            f"two probes on a scripted chat made the calls {roles}; expected one reviewer call each. The "
            "generator's turn is the draft you pass, not a call to chat, and one iteration is enough."
        )
    sent = reviews.calls[0].messages
    if sent[0] != {"role": "system", "content": "RULE-X"}:
        return f"probe(chat, 'RULE-X', draft) sent the reviewer the system message {sent[0]!r}: use reviewer_prompt."
    if not any(m["content"] == task.prompt() for m in sent[1:]):
        return "the reviewer did not see the merge_sorted task: run the loop on get_task('merge_sorted').prompt()."
    if not any(SORTED_DRAFT in str(m["content"]) for m in sent[1:]):
        return "the reviewer did not see the draft you passed to probe."
    if [r.accepted for r in runs] != [True, False]:
        return (
            f"on a reviewer that said APPROVED, then asked for a change, your probes' .accepted were "
            f"{[r.accepted for r in runs]}: expected [True, False]."
        )
    return ""


@exercise(
    "02.7",
    hints=(
        "probe returns what maker_checker returns, a Run (its .accepted is the verdict). The check gives probe a "
        "scripted reviewer and reads what it was sent, so probe must send the review through the chat it is given.",
        "inside probe, give maker_checker a chat function of your own: it answers the 'generator' role with a FakeReply "
        "of the draft (no model call) and passes every other role on to chat. Run it on the merge_sorted task, with "
        "reviewer_prompt, for one iteration.",
    ),
)
def requirement(
    probe: Callable[[Chat, str, str], object],
    my_reviewer_prompt: str | None,
    on_sorted: object,
    on_merge: object,
    rule_obeyed: object,
) -> tuple[bool, str] | tuple[bool, str, bool]:
    """Exercise 8: probe on a scripted reviewer, a rule added to the course prompt, and rule_obeyed as the probes
    measured it. The hints are about probe; a failure after it is explained in full by its message."""
    problem = _probe_problem(probe)
    if problem:
        return False, problem
    if not isinstance(my_reviewer_prompt, str) or not my_reviewer_prompt.startswith(
        REVIEWER_PROMPT
    ):
        return (
            False,
            (
                "probe works. Now my_reviewer_prompt: it should be the course's REVIEWER_PROMPT, unchanged, "
                'with your rule added after it (REVIEWER_PROMPT + " ...").'
            ),
            False,
        )
    if "sort" not in my_reviewer_prompt[len(REVIEWER_PROMPT) :].lower():
        return (
            False,
            (
                "probe works, but my_reviewer_prompt adds no rule about sorting to REVIEWER_PROMPT: the reviewer "
                "cannot obey a rule it is never told (name sorted() and .sort() in what you add)."
            ),
            False,
        )
    task = get_task("merge_sorted")
    for name, run, draft, label in (
        ("on_sorted", on_sorted, SORTED_DRAFT, "SORTED_DRAFT"),
        ("on_merge", on_merge, MERGE_DRAFT, "MERGE_DRAFT"),
    ):
        if not isinstance(run, Run):
            return (
                False,
                f"probe works; now store probe(chat, my_reviewer_prompt, {label}) in {name}.",
                False,
            )
        if (
            run.steps[0].request != task.prompt()
            or len(run.steps) != 2
            or run.steps[0].reply != draft
        ):
            return (
                False,
                (
                    f"{name} is not one probe of {label} as given (one iteration, its draft unchanged): "
                    f"store probe(chat, my_reviewer_prompt, {label}) in {name}."
                ),
                False,
            )
        review = run.steps[1]
        if review.latency_s <= 0 or review.prompt_tokens <= 0:
            return (
                False,
                (
                    f"{name}'s review did not come from the model (a scripted reply has no latency): "
                    "probe the real `chat` with my_reviewer_prompt."
                ),
                False,
            )
    measured = (not on_sorted.accepted) and on_merge.accepted
    if not isinstance(rule_obeyed, bool):
        return (
            False,
            (
                f"rule_obeyed should be True or False, got {rule_obeyed!r}: True when the reviewer rejected "
                "SORTED_DRAFT and approved MERGE_DRAFT, as on_sorted and on_merge say."
            ),
            False,
        )
    if rule_obeyed != measured:
        return (
            False,
            (
                f"rule_obeyed is {rule_obeyed}, but your probes measured: the reviewer "
                f"{_said(on_sorted.accepted)} SORTED_DRAFT and {_said(on_merge.accepted)} MERGE_DRAFT. "
                "The rule is obeyed when it rejects SORTED_DRAFT and approves MERGE_DRAFT: set rule_obeyed "
                "from on_sorted and on_merge, not by hand."
            ),
            False,
        )
    return True, (
        f"probe works on a scripted reviewer. On your probes, the real reviewer {_said(on_sorted.accepted)} "
        f"SORTED_DRAFT and {_said(on_merge.accepted)} MERGE_DRAFT: rule obeyed: {measured}."
    )


def _trimmed_problem(trimmed: Run) -> str:
    """ "" when every prompt of `trimmed` holds what keeping the task and the last two messages sends, as its
    token counts show; else which turn does not."""
    p = [s.prompt_tokens for s in trimmed.steps]
    c = [s.completion_tokens for s in trimmed.steps]
    for j in range(
        4, len(p)
    ):  # turn j sends the task and the replies of turns j-2, j-1; turn j-2 the same role's
        # the two newest messages in, the two oldest out
        expected = c[j - 2] + c[j - 1] - c[j - 4] - c[j - 3]
        tolerance = 8 + 0.03 * (c[j - 2] + c[j - 1] + c[j - 4] + c[j - 3])
        if abs((p[j] - p[j - 2]) - expected) > tolerance:
            return (
                f"trimmed's prompts are not those of a trimmed thread: turn {j + 1} read {p[j]} prompt tokens, where "
                f"the task and the last two messages come to about {p[j - 2] + expected} (turn {j - 1}'s "
                f"{p[j - 2]}, plus the two newest replies, minus the two that dropped out). Pass trim=trim."
            )
    return ""


@exercise(
    "02.6",
    hints=(
        "trim gets the whole thread and returns the messages to send: message 0 is the task, the rest alternate "
        "draft and review. A thread of three messages or fewer comes back as it is.",
        "slice it: the first message, then the last two of the messages after it; then run section 4's loop again "
        "with trim=trim.",
    ),
)
def trim_thread(
    trim: Callable[[list[dict]], list[dict]], trimmed: object
) -> tuple[bool, str] | tuple[bool, str, bool]:
    """Exercise 7: trim on made-up threads, and the four-round run of section 4 whose prompt tokens show the trim.
    The hints are about trim; a failure after it is explained in full by its message."""
    sample = [{"role": "user", "content": "task"}] + [
        {"role": "assistant", "content": str(i)} for i in range(6)
    ]
    for n in (1, 2, 3, 4, 7):
        want = sample[:1] + sample[1:n][-2:]
        got = trim(sample[:n])
        if got != want:
            shown = (
                [m["content"] for m in got]
                if isinstance(got, list) and all(isinstance(m, dict) for m in got)
                else got
            )
            return False, (
                f"trim of a thread of {n} message(s) returned {shown!r}, "
                f"expected {[m['content'] for m in want]} (the task, then the last two messages)."
            )
    thread = list(sample)
    trim(thread)
    if thread != sample:
        return (
            False,
            "trim changed the thread it was given: return a new list and leave the thread as it is.",
        )
    task = get_task("roman_to_int")
    if not isinstance(trimmed, Run):
        return (
            False,
            (
                "trim is right; now run section 4's loop again (stubborn_task, approval ignored) with "
                "trim=trim and store its result in `trimmed`."
            ),
            False,
        )
    if (
        trimmed.steps[0].request != task.prompt()
        or trimmed.stop is not Stop.MAX_ITERATIONS
        or len(trimmed.steps) != 8
    ):
        return (
            False,
            (
                f"trim is right, but trimmed should be section 4's run: roman_to_int, four full rounds with "
                f"approval ignored (is_approved=lambda review: False); yours stopped ({trimmed.stop.value}) "
                f"after {len(trimmed.steps)} turn(s)."
            ),
            False,
        )
    prefixes = [
        "[Reviewer]: " if s.role == "generator" else "[Generator]: " for s in trimmed.steps[1:]
    ]
    if not all(
        s.request.startswith(pre) for s, pre in zip(trimmed.steps[1:], prefixes, strict=True)
    ):
        return (
            False,
            (
                "trim is right, but trimmed should run on section 4's shared thread (the default "
                "perspective), as `stubborn` did."
            ),
            False,
        )
    problem = _trimmed_problem(trimmed)
    if problem:
        return False, f"trim is right, but {problem}", False
    avg = sum(s.prompt_tokens for s in trimmed.steps) / len(trimmed.steps)
    return (
        True,
        f"trim keeps the task and the latest exchange: {avg:.0f} prompt tokens per call in `trimmed`.",
    )


FACTORIAL_WRONG = '```python\ndef calculate_factorial(n):\n    """n!"""\n    return n\n```'
RUNNING_AVERAGE_RIGHT = (
    '```python\ndef running_average(numbers):\n    """The running means."""\n    out, total = [], 0\n'
    "    for i, x in enumerate(numbers, 1):\n        total += x\n        out.append(total / i)\n"
    "    return out\n```"
)
MADE_UP = (
    "made-up runs: factorial, a failing draft rejected, then a failing draft APPROVED in iteration 2; "
    "running_average, a passing draft APPROVED at once"
)


def made_up_runs() -> dict[str, Run]:
    """Two scripted maker-checker runs: a false approval in iteration 2 (factorial, a task lesson 01 passed), and
    a right approval (running_average, a task lesson 01 failed)."""
    out = {}
    for tid, drafts, reviews in (
        ("factorial", [FACTORIAL_WRONG] * 2, ["Handle n = 0 and multiply.", "APPROVED"]),
        ("running_average", [RUNNING_AVERAGE_RIGHT], ["APPROVED"]),
    ):
        task = get_task(tid)
        chat = ScriptedChat({"generator": drafts, "reviewer": reviews})
        out[tid] = maker_checker(chat, task.prompt(), entry_point=task.entry_point)
    return out


def _false_approvals(runs: Mapping[str, Run]) -> tuple[int, list[str]]:
    """The truth, from the hidden tests: the APPROVED reviews of failing drafts, and their tasks, sorted."""
    rows = [(tid, a, p) for tid, r in runs.items() for _, a, p in judge_the_judge(get_task(tid), r)]
    return sum(a and not p for _, a, p in rows), sorted({tid for tid, a, p in rows if a and not p})


def _miscount(got: object, runs: Mapping[str, Run], name: str) -> str:
    """ "" when `got` is the right (count, tasks) for `runs`; else what is wrong with it."""
    want = _false_approvals(runs)
    if not isinstance(got, (tuple, list)) or len(got) != 2:
        return f"count_false({name}) returned {got!r}: return a pair, (number of false approvals, sorted task ids)."
    count, tasks = got
    if not isinstance(count, int) or isinstance(count, bool):
        return f"count_false({name}) returned {count!r} as its count: a whole number."
    if not isinstance(tasks, Sequence) or isinstance(tasks, str):
        return f"count_false({name}) returned {tasks!r} as its tasks: a list of task ids."
    if count != want[0]:
        rows = [(a, p) for tid, r in runs.items() for _, a, p in judge_the_judge(get_task(tid), r)]
        why = ""
        if count == sum(a for a, _ in rows):
            why = " That is every APPROVED, including drafts that pass."
        elif count == sum(a and p for a, p in rows):
            why = " That counts approvals of drafts that pass."
        return f"count_false({name}) counted {count}, which is not the number of APPROVED reviews of failing drafts.{why}"
    if list(tasks) != want[1]:
        if sorted(tasks) == want[1]:
            return f"count_false({name}) has the right tasks, but not sorted."
        return f"count_false({name}) has the right count, but its tasks {list(tasks)} are not where a failing draft was approved."
    return ""


@exercise(
    "02.5",
    hints=(
        "judge_the_judge(get_task(tid), run) gives one (iteration, approved, passed) triple per review of that run: "
        "every review, not only the first.",
        "a false approval is a triple with approved True and passed False: count them over every run, and collect the "
        "ids of the tasks where at least one occurs, sorted. Work only from the runs you are given.",
    ),
)
def count_false_approvals(
    count_false: Callable[[Mapping[str, Run]], object],
    runs: Mapping[str, Run],
    own_runs: Mapping[str, Run],
) -> tuple[bool, str]:
    """Exercise 6: count_false on section 3's runs, section 4's own_runs and made-up runs, against the hidden tests'
    verdicts computed here."""
    ids = {t.id for t in course_tasks()}
    for name, rs in (("runs", runs), ("own_runs", own_runs)):
        if not isinstance(rs, Mapping) or set(rs) != ids:
            return False, f"pass `{name}` as it is: one maker-checker run per course task."
    for name, rs in (("runs", runs), ("own_runs", own_runs)):
        problem = _miscount(count_false(rs), rs, name)
        if problem:
            return False, problem
    made_up = made_up_runs()
    got = count_false(made_up)
    if _miscount(got, made_up, "made_up"):
        return False, (
            f"right on runs and own_runs, but on {MADE_UP}, count_false returned {got!r}; expected "
            f"{_false_approvals(made_up)!r}."
        )
    count, tasks = _false_approvals(runs)
    own = _false_approvals(own_runs)
    return True, (
        f"count_false works on made-up runs too. Section 3's runs: {count} false approval(s), on "
        f"{', '.join(tasks) or 'no task'}; the user-role runs: {own[0]}, on {', '.join(own[1]) or 'no task'}."
    )


# --- Build 5: what the generator sees when it revises (02.8), graded by what it does. -------------

# (task, three wrong drafts, a right one): the second and third fail the same visible checks, the first
# others, so the latest review is told from an earlier one and a revision that ignores the old code sees
# the same thread twice
FRESH_CASES = (
    (
        "fibonacci",
        "```python\ndef fibonacci(n):\n    return n * 1\n```",
        "```python\ndef fibonacci(n):\n    return 0\n```",
        "```python\ndef fibonacci(n):\n    return n - n\n```",
        RIGHT,
    ),
    (
        "factorial",
        "```python\ndef calculate_factorial(n):\n    return n + 0\n```",
        "```python\ndef calculate_factorial(n):\n    return 1\n```",
        "```python\ndef calculate_factorial(n):\n    return n // n if n else 1\n```",
        "```python\ndef calculate_factorial(n):\n    out = 1\n    for k in range(2, n + 1):\n        out *= k\n    return out\n```",
    ),
)


def _checks_reviewer(chat: Chat, task: Task, seen: list) -> Chat:
    """The reviewer as Build 4 makes it (the visible checks), keeping each review request it receives."""
    critic = TestGroundedCritic()

    def review(messages, role, **params):
        if role != "reviewer":
            return chat(messages, role=role, **params)
        seen.append([dict(m) for m in messages])
        evaluation = critic.evaluate(
            task, extract_code(messages[-1]["content"], task.entry_point).code
        )
        return FakeReply(_visible_review(evaluation), 0, 0)

    return review


def _fresh_problem(fresh_chat: Callable[..., object], case: tuple) -> str:
    task_id, *wrong, right = case
    task = get_task(task_id)
    inner, reviews, asked, changed = ScriptedChat({"generator": [*wrong, right]}), [], [], []
    fresh = fresh_chat(_checks_reviewer(inner, task, reviews))

    def front(messages, role, **params):  # what the loop asks fresh_chat for
        asked.append((role, [dict(m) for m in messages]))
        reply = fresh(messages, role=role, **params)
        if messages != asked[-1][1]:
            changed.append(role)
        return reply

    reached, run = offline(
        lambda: maker_checker(front, task.prompt(), entry_point=task.entry_point)
    )
    if reached:
        return f"fresh_chat {REAL_CALL}"
    if changed:
        return (
            f"fresh_chat changed the messages it was given (a {changed[0]} call): they are your loop's thread, "
            "which every later call re-sends. Build a new list instead."
        )
    sent = [c for c in inner.calls if c.role == "generator"]
    turns = [m for role, m in asked if role == "generator"]
    if len(sent) != len(turns) or any(c.role != "generator" for c in inner.calls):
        return (
            f"on {task_id}, the loop asked for {len(turns)} generator turns and the chat behind fresh_chat "
            f"received {len(sent)} generator calls ({[c.role for c in inner.calls]}): one call per turn, in the "
            "generator's role."
        )
    if [m for role, m in asked if role == "reviewer"] != reviews:
        return "a reviewer's request was changed on its way: fresh_chat passes every other role's call unchanged."
    if sent[0].messages != turns[0] or sent[0].params:
        return (
            f"on {task_id}, the first draft's request was changed ({short(sent[0].messages[-1]['content'])}, "
            f"{sent[0].params}): pass it on as it comes, so the first draft stays lesson 01's one-shot draft."
        )
    for n, call in enumerate(sent[1:], 1):
        problem = revision_problem(
            call, task, run.judgements[n - 1].reply, wrong[:n], f"revision {n} on {task_id}"
        )
        if problem:
            return problem
    problem = sampling_problem(sent[1:], f"on {task_id}")
    if problem:
        return problem
    if (
        run.stop is not Stop.ACCEPTED
        or run.final_code.strip() != extract_code(right, task.entry_point).code.strip()
    ):
        return f"on {task_id} the loop should stop approved on the right fourth draft, not {run.stop.value}."
    return ""


@exercise(
    "02.8",
    hints=(
        "fresh_chat returns a function (messages, role, **params). A generator call whose thread is only the task "
        "(len(messages) == 2) is the first draft: pass it on unchanged. Every other role: unchanged too.",
        "for a revision, build a new request: the generator's system message, then one user message with the task "
        "(messages[1]['content']) and the latest review (messages[-1]['content']), never the old code; and call "
        "chat(..., role='generator', temperature=0.6, seed=...) with a seed of its own for each revision.",
    ),
)
def fresh_revision(fresh_chat: Callable[..., object]) -> tuple[bool, str]:
    """Build 5: a revision that is a new sample, shown the failed checks and not the old code; graded by what
    it sends inside the package's loop on two scripted tasks."""
    for case in FRESH_CASES:
        problem = _fresh_problem(fresh_chat, case)
        if problem:
            return False, problem
    return True, (
        "On 2 scripted tasks your first draft went out as lesson 01's request, and each revision carried the task "
        "and the failed checks, no old code, and was a new sample."
    )
