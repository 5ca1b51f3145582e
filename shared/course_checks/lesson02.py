"""Lesson 02's exercise checks: the learner's APPROVED reading, maker-checker loop, token budget and evidence reviewer
(graded against the package's loop on scripted agents, request by request), then false approvals, a trimmed thread
and a rule in the reviewer's prompt."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from reflect.judging.critics import TestGroundedCritic
from reflect.judging.hidden import judge_the_judge
from reflect.records import Run, Stop, Verdict
from reflect.strategies.maker_checker import maker_checker
from reflect.tasks.extract import extract_code
from reflect.tasks.prompts import REVIEWER_PROMPT, generator_messages
from reflect.tasks.task import Task, course_tasks, get_task
from reflect.testing import FakeReply, ScriptedChat

from . import exercise, later, offline, short
from .revisions import revision_problem, sampling_problem
from .spec import REAL_CALL, Calls, Case, Misreading, Properties, Values, same, show

Chat = Callable[..., object]

SORTED_DRAFT = '```python\ndef merge_sorted_lists(list1, list2):\n    """Merge two sorted lists."""\n    return sorted(list1 + list2)\n```'
MERGE_DRAFT = (
    '```python\ndef merge_sorted_lists(list1, list2):\n    """Merge two sorted lists in one pass."""\n    i = j = 0\n    out = []\n'
    "    while i < len(list1) and j < len(list2):\n        if list1[i] <= list2[j]:\n            out.append(list1[i])\n            i += 1\n"
    "        else:\n            out.append(list2[j])\n            j += 1\n    return out + list1[i:] + list2[j:]\n```"
)


# --- The builds: each graded against the package's answer key on scripted agents. ---------------

maker_checker_module = importlib.import_module("reflect.strategies.maker_checker")  # the answer key
sentinel_module = importlib.import_module("reflect.judging.sentinel")
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
    ("APP*ROVED", False),
    ("**APPR_OVED**", False),
    ("...APPROVED", False),
    # one final . or ! only, and only the marks the statement names
    ("APPROVED?", False),
    ("**APPROVED?**", False),
    ("APPROVED!!", False),
    ("APPROVED..", False),
    ("> APPROVED", False),
    ("- APPROVED", False),
    ("~~APPROVED~~", False),
    # spaces around the marks, a mark around the final period, a CR or a tab
    ("**APPROVED** ", True),
    ("  **APPROVED**", True),
    ("**APPROVED.**", True),
    ("`APPROVED.`", True),
    ("APPROVED\r\nThe loop is clean.", True),
    ("\tAPPROVED", True),
)


APPROVED = Values(
    "approved",
    [Case((text,)) for text, _ in READINGS],
    oracle=dict(READINGS).__getitem__,
    misreadings=[
        Misreading(
            lambda text: "APPROVED" in text,
            "That finds APPROVED anywhere in the review: it must be the whole first line.",
        ),
        Misreading(
            lambda text: text.strip().startswith("APPROVED"),
            "That reads only how the review starts: the first line must be APPROVED and nothing else, apart from marks and a final . or !.",
        ),
        Misreading(
            lambda text: "APPROVED" in text.upper(),
            "The reading is case-sensitive: 'Approved' is not APPROVED.",
        ),
    ],
    forbid=(
        (sentinel_module,),
        None,
        "approved called the package's sentinel reader: the reading is yours to write.",
    ),
)


approved_reading = APPROVED.exercise(
    "02.1",
    "approved_reading",
    hints=(
        "find the first line that is not blank (review.splitlines(), skipping lines that are only spaces); "
        "no such line means no approval.",
        "strip that line of spaces and of the marks *, _, ` and # at its two ends, all at once (as in '## APPROVED' "
        "or '**APPROVED** '), then of one final . or !; it approves only if what is left == 'APPROVED'.",
    ),
    passed=f"Your reading agrees with the rule on all {len(READINGS)} reviews of the table.",
)


def _script(reviews: Sequence[object], drafts: Sequence[object] = ()) -> dict[str, list]:
    """A scripted generator (WRONG, then BETTER, then RIGHT, unless drafts are given) and reviewer."""
    drafts = list(drafts) or [WRONG, BETTER, RIGHT, RIGHT]
    return {"generator": list(drafts), "reviewer": list(reviews)}


REASONS = {"accepted": "approved", "token_budget": "budget"}


def _loop_key(
    chat: Chat, task: Task, *, max_iterations: int = 4, budget: int | None = None
) -> tuple:
    """The answer key in the learner's shape: the package's maker_checker, as (draft, approved, reason)."""
    run = maker_checker(
        chat,
        task.prompt(),
        entry_point=task.entry_point,
        max_iterations=max_iterations,
        token_budget=budget,
    )
    return run.final_code, run.accepted, REASONS.get(run.stop.value, run.stop.value)


def _outcome(got: object, want: tuple) -> str | None:
    """What differs between the learner's (draft, approved, reason) and the key's, or None."""
    if not isinstance(got, (tuple, list)) or len(got) != 3:
        return f"returned {short(got)}: return a tuple (draft, approved, reason)."
    draft, approved, reason = got
    reason = str(getattr(reason, "value", reason))
    if reason != want[2]:
        package = f", the package's name for {REASONS[reason]!r}" if reason in REASONS else ""
        return f"returned the reason {reason!r}{package}; the loop stopped with {want[2]!r}."
    if approved not in (True, False) or bool(approved) != want[1]:
        return f"returned approved={approved!r}; the loop's last review says {want[1]}."
    if not isinstance(draft, str) or draft.strip() != want[0].strip():
        fenced = (
            isinstance(draft, str)
            and extract_code(draft, "f").code.strip() == want[0].strip() != draft.strip()
        )
        return (
            f"returned the draft {short(draft, 50)}; expected the code of the last draft that holds code, "
            f"{short(want[0], 50)}"
            + (
                ": the code alone (extract_code(...).code), not the reply around it."
                if fenced
                else "."
            )
        )
    return None


FORBID_LOOP = (
    (maker_checker_module,),
    {"maker_checker"},
    "your function called the package's maker_checker: the loop is yours to write.",
)
_LOOP_ROWS = (
    ("a reviewer who approves at once", _script(["APPROVED"]), 4, CHECK_TASK),
    ("a rejection, then APPROVED", _script(["Handle n = 1.", "APPROVED"]), 4, CHECK_TASK),
    ("a reviewer who never approves", _script(["Wrong for n = 2."] * 4), 4, CHECK_TASK),
    ("reviews that only look like approvals, then **APPROVED**", _script(["APPROVED? Not yet: n = 2 is wrong.", "Not APPROVED: use a loop.", "**APPROVED**"]), 4, CHECK_TASK),
    ("a generator turn with no code", _script(["Fix n = 2.", "Still wrong."], [RIGHT, ECHO]), 2, CHECK_TASK),
    ("max_iterations=1", _script(["Wrong."]), 1, CHECK_TASK),
    ("an approval in the last round", _script(["Wrong for n = 2.", "Still wrong.", "Use a loop.", "APPROVED"]), 4, CHECK_TASK),
    ("a draft with prose after its code, then two versions of the function", _script(["Handle n = 10.", "APPROVED"], [ALMOST + "\n\nIt loops n times.", WRONG + "\nOr:\n" + BETTER]), 3, CHECK_TASK),
    ("merge_sorted, approved at its second draft", _script(["Merge in one pass.", "APPROVED"], [SORTED_DRAFT, MERGE_DRAFT]), 3, "merge_sorted"),
    ("a reply with blank lines around it", _script(["Fix n = 2.", "APPROVED"], ["\n" + BETTER + "\n\n  ", RIGHT]), 3, CHECK_TASK),
)  # fmt: skip


LOOP = Calls(
    "maker_checker_loop",
    [
        Case((script, get_task(task)), what, {"max_iterations": n})
        for what, script, n, task in _LOOP_ROWS
    ],
    key=_loop_key,
    result=_outcome,
    forbid=FORBID_LOOP,
)


loop = LOOP.exercise(
    "02.2",
    "loop",
    hints=(
        "keep one list, the thread, starting with the task as a user message. Each call sends "
        "[{'role': 'system', 'content': <that role's prompt>}, *thread]; each reply joins the thread as "
        "{'role': 'assistant', 'content': f'[Generator]: {reply.text}'} (or '[Reviewer]: ').",
        "a for loop over range(max_iterations): the generator's call, then the reviewer's; return as soon as "
        "approved(review.text). Keep the last draft that holds code (extract_code(reply.text, task.entry_point)); "
        "after the loop, return it with False and 'max_iterations'.",
    ),
    passed=(
        f"On {len(LOOP.cases)} scripted runs your loop sent every request the package's maker_checker sends, "
        "in order, and returned the same draft, verdict and reason."
    ),
)


def _costly(reviews: Sequence[str], gen: tuple[int, int], rev: tuple[int, int]) -> dict[str, list]:
    drafts = [WRONG, BETTER, RIGHT, RIGHT]
    return {
        "generator": [FakeReply(d, *gen) for d in drafts],
        "reviewer": [FakeReply(r, *rev) for r in reviews],
    }


_BUDGET_ROWS = (
    ("a budget that is never reached", _costly(["No."] * 4, (100, 50), (120, 30)), 10_000),
    ("a budget reached by the calls made", _costly(["No."] * 4, (100, 50), (120, 30)), 600),
    ("the next generator call would pass it", _costly(["No."] * 4, (100, 50), (120, 30)), 500),
    ("the next reviewer call would pass it", _costly(["No."] * 4, (100, 50), (300, 100)), 700),
    ("an approval within the budget", _costly(["No.", "APPROVED"], (100, 50), (120, 30)), 700),
    ("a budget smaller than one call", _costly(["No."] * 4, (100, 50), (120, 30)), 40),
    ("the first call spends the whole budget", _costly(["No."] * 4, (100, 50), (120, 30)), 150),
    ("the reviewer's first call, estimated at 0, within the budget", _costly(["No."] * 4, (100, 50), (120, 30)), 200),
    ("merge_sorted, within the budget", {"generator": [FakeReply(SORTED_DRAFT, 100, 50), FakeReply(MERGE_DRAFT, 100, 90)], "reviewer": [FakeReply("Merge in one pass.", 120, 30), FakeReply("APPROVED", 120, 5)]}, 1_000),
    ("a generator whose first call is its cheapest", {"generator": [FakeReply(WRONG, 5, 5), FakeReply(BETTER, 30, 20), FakeReply(RIGHT, 30, 20)], "reviewer": [FakeReply("No.", 5, 5)] * 3}, 100),
    ("a generator whose second call costs less than its first", {"generator": [FakeReply(WRONG, 300, 100), FakeReply(BETTER, 50, 20), FakeReply(RIGHT, 50, 20)], "reviewer": [FakeReply("No.", 50, 10)] * 3}, 900),
)  # fmt: skip


BUDGET = Calls(
    "budget_loop",
    [
        Case(
            (script, get_task("merge_sorted" if what.startswith("merge") else CHECK_TASK), budget),
            what,
        )
        for what, script, budget in _BUDGET_ROWS
    ],
    key=lambda chat, task, budget: _loop_key(chat, task, budget=budget),
    result=_outcome,
    forbid=FORBID_LOOP,
)


budget = BUDGET.exercise(
    "02.3",
    "budget",
    hints=(
        "count used = the prompt_tokens + completion_tokens of every reply so far, and keep each role's "
        "largest call so far (0 before its first call).",
        "before each call: if used >= budget, or used + that role's largest call so far > budget, return the "
        "last draft with code, False and 'budget'. Everything else is your loop of exercise 2.",
    ),
    passed=(
        f"On {len(BUDGET.cases)} scripted budgets your loop stopped where the package's does, before the call "
        "that would pass the budget, and returned the same draft."
    ),
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


NEAR_SEARCH = (  # fails 1 of HumanEval/69's 12 visible checks: the critic scores it 9.2
    "def search(lst):\n    if len(lst) < 3:\n        return lst[0]\n"
    "    return max((x for x in set(lst) if lst.count(x) >= x), default=-1)\n"
)
SEARCH = "def search(lst):\n    return max((x for x in set(lst) if x > 0 and lst.count(x) >= x), default=-1)\n"


def _evidence_key(chat: Chat, task: Task) -> Chat:
    """The answer key in the learner's shape: the reviewer's turn is the visible checks, every other turn the chat's."""
    critic = TestGroundedCritic()

    def review(messages, role="generator", **params):  # noqa: ANN001 - a chat's signature
        if role != "reviewer":
            return chat(messages, role=role, **params)
        code = extract_code(
            messages[-1]["content"].removeprefix("[Generator]: "), task.entry_point
        ).code
        return FakeReply(_visible_review(critic.evaluate(task, code)), 0, 0)

    return review


def _in_the_loop(evidence_chat: Callable, chat: Chat, task: Task) -> tuple:
    """The package's loop with `evidence_chat(chat, task)` as its chat: its reviews, and how it stopped."""
    run = maker_checker(evidence_chat(chat, task), task.prompt(), entry_point=task.entry_point)
    reviews = [(j.reply, j.prompt_tokens + j.completion_tokens) for j in run.judgements]
    probe = ScriptedChat(
        {"summarizer": ["The run made drafts until one passed."]}
    )  # a role of neither
    said = evidence_chat(probe, task)(
        [{"role": "user", "content": "Summarise the run."}], role="summarizer"
    )
    return reviews, run.stop.value, len(run.drafts), (getattr(said, "text", said), len(probe.calls))


def _reviews_problem(got: tuple, want: tuple) -> str | None:
    for (review, tokens), (right, _) in zip(got[0], want[0], strict=False):
        if review != right:
            return (
                f"a review was {short(review)}; expected {short(right)} (the visible checks' feedback, or APPROVED "
                "when all of them pass)."
            )
        if tokens:
            return "the review is not a model call: reply with 0 prompt and 0 completion tokens."
    if got[3] != want[3]:
        return (
            f"a call in another role ('summarizer') got {short(got[3])}: every role but the reviewer's goes to the "
            "chat you were given, unchanged."
        )
    if got != want:
        return (
            f"the loop stopped {got[1]!r} after {got[2]} drafts; with the visible checks as its reviewer it stops "
            f"{want[1]!r} after {want[2]}."
        )
    return None


EVIDENCE = Calls(
    "evidence_chat",
    [
        Case(({"generator": [WRONG, ALMOST + "\n\nIt loops n times.", RIGHT, RIGHT]},
              get_task(CHECK_TASK)), "a wrong draft, a nearly right one with prose after its fence, a right one"),
        Case(({"generator": [NEAR_MERGE, MERGE_DRAFT]}, get_task("merge_sorted")),
             "merge_sorted: a draft failing 1 of 5 visible checks, then a right one"),
        Case(({"generator": ["```python\ndef fibonacci(n)\n    return n\n```", RIGHT]},
              get_task(CHECK_TASK)), "a draft that does not load, then a right one"),
        Case(({"generator": [NEAR_MERGE + "\nOr, in one pass:\n" + MERGE_DRAFT, MERGE_DRAFT]},
              get_task("merge_sorted")), "merge_sorted: a reply holding two versions, the failing one first"),
        Case(({"generator": [f"```python\n{NEAR_SEARCH}```", f"```python\n{SEARCH}```"]}, get_task("HumanEval/69")),
             "HumanEval/69: a draft failing 1 of its 12 visible checks (scored 9.2), then a right one"),
        Case(({"generator": [MERGE_DRAFT.removeprefix("```python\n").removesuffix("```").rstrip().replace(
                   "(list1, list2)", "(list1: list[int], list2: list[int]) -> list[int]")]}, get_task("merge_sorted")),
             "merge_sorted: a right draft with no fence, and type hints"),
    ],
    key=_evidence_key,
    drive=_in_the_loop,
    result=_reviews_problem,
)  # fmt: skip


evidence = EVIDENCE.exercise(
    "02.4",
    "evidence",
    hints=(
        "evidence_chat returns a function (messages, role). For every role but 'reviewer' it returns "
        "chat(messages, role); the reviewer's turn makes no model call.",
        "for the reviewer: the draft is the code in the last message, without its '[Generator]: ' prefix "
        "(extract_code(messages[-1]['content'].removeprefix('[Generator]: '), task.entry_point).code); evaluation = TestGroundedCritic().evaluate(task, code); reply "
        "FakeReply('APPROVED' if evaluation.score == 10 else evaluation.feedback, 0, 0).",
    ),
    passed=(
        "The reviewer's turn is the visible checks: it rejected the wrong draft and the nearly right one "
        "with their failing checks, and approved the fix."
    ),
)


def _probe_key(chat: Chat, reviewer_prompt: str, draft: str) -> Run:
    task = get_task("merge_sorted")

    def drafting(messages: list[dict], role: str = "generator", **params: object) -> object:
        return (
            FakeReply(draft, 0, 0) if role == "generator" else chat(messages, role=role, **params)
        )

    return maker_checker(
        drafting,
        task.prompt(),
        entry_point=task.entry_point,
        reviewer_prompt=reviewer_prompt,
        max_iterations=1,
    )


PROBE = Calls(
    "probe",
    [
        Case(
            ({"reviewer": ["APPROVED"]}, "RULE-X: a made-up rule.", SORTED_DRAFT),
            "a reviewer that approves",
        ),
        Case(
            ({"reviewer": ["Not yet: merge in one pass."]}, "RULE-Y: another.", MERGE_DRAFT),
            "one that rejects",
        ),
    ],
    key=_probe_key,
    result=lambda got, want: (
        None
        if isinstance(got, Run)
        and (got.accepted, got.final_code) == (want.accepted, want.final_code)
        else f"probe returned {show(got)}: return the loop's Run (what maker_checker returns), its draft the one "
        "you were given."
    ),
).register("02.7")


def _said(approved: bool) -> str:
    return "approved" if approved else "rejected"


def _stopped(run: Run, stop: Stop) -> Run:
    """`run` as if its reviewer had decided `stop`: its last review's reply and verdict say the same."""
    ok, steps = stop is Stop.ACCEPTED, list(run.steps)
    i = max((k for k, step in enumerate(steps) if step.role == "reviewer"), default=None)
    if i is not None:
        verdict = replace(
            steps[i].verdict or Verdict("review"),
            label="approved" if ok else "rejected",
            accepted=ok,
        )
        steps[i] = replace(steps[i], reply="**APPROVED**" if ok else "Not APPROVED: the inputs are sorted, merge them in one pass.",
                           verdict=verdict)  # fmt: skip
    return replace(run, stop=stop, steps=tuple(steps))


def _outcomes(run: Run) -> list[Case]:
    """`run` as decided each way, as both probes: every pair of verdicts."""
    stops = (Stop.ACCEPTED, Stop.MAX_ITERATIONS)
    return [
        Case((_stopped(run, a), _stopped(run, b)), f"the reviewer {_said(a is Stop.ACCEPTED)} SORTED_DRAFT and "
             f"{_said(b is Stop.ACCEPTED)} MERGE_DRAFT")
        for a in stops
        for b in stops
    ]  # fmt: skip


OBEYED = Values(
    "obeyed",
    _outcomes(_probe_key(ScriptedChat({"reviewer": ["APPROVED"]}), REVIEWER_PROMPT, SORTED_DRAFT)),
    oracle=lambda on_sorted, on_merge: not on_sorted.accepted and on_merge.accepted,
    show=lambda v: f"<{v.stop.value} run>" if isinstance(v, Run) else show(v),
    misreadings=[
        Misreading(
            lambda on_sorted, on_merge: on_sorted.accepted and not on_merge.accepted,
            "The rule is obeyed when the reviewer rejects SORTED_DRAFT (it calls sorted()) and approves MERGE_DRAFT.",
        )
    ],
).register("02.7")


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
    obeyed: Callable[[Run, Run], object],
) -> tuple[bool, str] | tuple[bool, str, bool]:
    """Exercise 8: probe on a scripted reviewer, a rule added to the course prompt, and obeyed on every outcome of
    two probes, then on the learner's. The hints are about probe; a failure after it is explained in full by its
    message."""
    problem = PROBE.problem(probe)
    if problem:
        return False, problem
    if not isinstance(my_reviewer_prompt, str) or not my_reviewer_prompt.startswith(
        REVIEWER_PROMPT
    ):
        return later(
            "probe works. Now my_reviewer_prompt: it should be the course's REVIEWER_PROMPT, unchanged, "
            'with your rule added after it (REVIEWER_PROMPT + " ...").'
        )
    if "sort" not in my_reviewer_prompt[len(REVIEWER_PROMPT) :].lower():
        return later(
            "probe works, but my_reviewer_prompt adds no rule about sorting to REVIEWER_PROMPT: the reviewer "
            "cannot obey a rule it is never told (name sorted() and .sort() in what you add)."
        )
    task = get_task("merge_sorted")
    for name, run, draft, label in (
        ("on_sorted", on_sorted, SORTED_DRAFT, "SORTED_DRAFT"),
        ("on_merge", on_merge, MERGE_DRAFT, "MERGE_DRAFT"),
    ):
        if not isinstance(run, Run):
            return later(
                f"probe works; now store probe(chat, my_reviewer_prompt, {label}) in {name}."
            )
        if (
            run.steps[0].request != task.prompt()
            or len(run.steps) != 2
            or run.steps[0].reply != draft
        ):
            return later(
                f"{name} is not one probe of {label} as given (one iteration, its draft unchanged): "
                f"store probe(chat, my_reviewer_prompt, {label}) in {name}."
            )
        review = run.steps[1]
        if review.latency_s <= 0 or review.prompt_tokens <= 0:
            return later(
                f"{name}'s review did not come from the model (it has no latency and no prompt tokens: a scripted "
                "reply, or in replay a request the recording lacks, as a new wording of the rule is): probe the real "
                "`chat` with my_reviewer_prompt, live."
            )
    problem = OBEYED.problem(obeyed, also=[Case((on_sorted, on_merge), "your two probes")])
    if problem:
        return later(problem)
    measured = (not on_sorted.accepted) and on_merge.accepted
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


_SAMPLE = [{"role": "user", "content": "task"}] + [
    {"role": "assistant", "content": str(i)} for i in range(6)
]
_MIXED = [  # reviews in the user's role
    {"role": r, "content": c}
    for r, c in (
        ("user", "task"),
        ("assistant", "a"),
        ("user", "review 1"),
        ("assistant", "b"),
        ("user", "review 2"),
    )
]
_ECHO = [
    *_SAMPLE[:2],
    *[{"role": "assistant", "content": "[Reviewer]: APPROVED"}] * 2,
]  # a message repeated
TRIM = Values(
    "trim",
    [Case((thread,)) for thread in (*(_SAMPLE[:n] for n in (1, 2, 3, 4, 5, 7)), _MIXED, _ECHO, [])],
    oracle=lambda thread: thread[:1] + thread[1:][-2:],
    show=lambda v: (
        repr([m.get("content") for m in v])
        if isinstance(v, list) and all(isinstance(m, dict) for m in v)
        else show(v)
    ),
    misreadings=[
        Misreading(
            lambda t: t[-3:],
            "That keeps the last three messages: keep the task (message 0), then the last two.",
        ),
        Misreading(
            lambda t: t[:1] + [m for m in t[1:] if m.get("role") == "assistant"][-2:],
            "That keeps the last two assistant messages: keep the last two messages, whatever their role (a review "
            "may come in the user's role).",
        ),
        Misreading(
            lambda t: t[:1] + t[-2:],
            "That repeats the task in a short thread: take the last two of the messages after it (thread[1:]).",
        ),
    ],
).register("02.6")


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
    """Exercise 7: trim on made-up threads (TRIM), and the four-round run of section 4 whose prompt tokens show the
    trim. The hints are about trim; a failure after it is explained in full by its message."""
    problem = TRIM.problem(trim)
    if problem:
        return False, problem
    task = get_task("roman_to_int")
    if not isinstance(trimmed, Run):
        return later(
            "trim is right; now run section 4's loop again (stubborn_task, approval ignored) with "
            "trim=trim and store its result in `trimmed`."
        )
    if (
        trimmed.steps[0].request != task.prompt()
        or trimmed.stop is not Stop.MAX_ITERATIONS
        or len(trimmed.steps) != 8
    ):
        return later(
            f"trim is right, but trimmed should be section 4's run: roman_to_int, four full rounds with "
            f"approval ignored (is_approved=lambda review: False); yours stopped ({trimmed.stop.value}) "
            f"after {len(trimmed.steps)} turn(s)."
        )
    prefixes = [
        "[Reviewer]: " if s.role == "generator" else "[Generator]: " for s in trimmed.steps[1:]
    ]
    if not all(
        s.request.startswith(pre) for s, pre in zip(trimmed.steps[1:], prefixes, strict=True)
    ):
        return later(
            "trim is right, but trimmed should run on section 4's shared thread (the default "
            "perspective), as `stubborn` did."
        )
    problem = _trimmed_problem(trimmed)
    if problem:
        return later(f"trim is right, but {problem}")
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


def _made_up(*specs: tuple[str, list[str], list[str]]) -> Run:
    """One run of the steps of maker-checker runs on one task, one after the other: a run on which a loop may
    have approved more than once."""
    runs = []
    for tid, drafts, reviews in specs:
        task = get_task(tid)
        runs.append(
            maker_checker(
                ScriptedChat({"generator": drafts, "reviewer": reviews}),
                task.prompt(),
                entry_point=task.entry_point,
            )
        )
    return replace(runs[-1], steps=tuple(step for r in runs for step in r.steps))


FACTORIAL_RIGHT = (
    '```python\ndef calculate_factorial(n):\n    """n!"""\n    if n < 0:\n        raise ValueError(n)\n    out = 1\n'
    "    for i in range(2, n + 1):\n        out *= i\n    return out\n```"
)
FALSE_APPROVALS = Values(
    "count_false",
    [
        Case((runs,), note)
        for note, runs in (
            (MADE_UP, made_up_runs()),
            (
                "a made-up run: a right factorial rejected, then a turn with no code APPROVED",
                {
                    "factorial": _made_up(
                        ("factorial", [FACTORIAL_RIGHT, ECHO], ["Add a docstring.", "APPROVED"])
                    )
                },
            ),
            (
                "made-up runs: running_average with one false approval, then factorial with two",
                {
                    "running_average": _made_up(
                        (
                            "running_average",
                            ["```python\ndef running_average(numbers):\n    return numbers\n```"],
                            ["APPROVED"],
                        )
                    ),
                    "factorial": _made_up(  # approvals in other words than the bare sentinel
                        ("factorial", [FACTORIAL_WRONG], ["APPROVED."]),
                        ("factorial", [FACTORIAL_WRONG], ["**APPROVED**"]),
                    ),
                },
            ),
            (
                "a made-up run: two failing drafts rejected, then a right one APPROVED",
                {
                    "factorial": _made_up(
                        (
                            "factorial",
                            [FACTORIAL_WRONG, FACTORIAL_WRONG, FACTORIAL_RIGHT],
                            ["Fix the base case.", "Still wrong.", "APPROVED"],
                        )
                    )
                },
            ),
            ("no runs", {}),
        )
    ],
    oracle=_false_approvals,
    equal=lambda got, want: (
        isinstance(got, (tuple, list))
        and len(got) == 2
        and isinstance(got[0], int)
        and not isinstance(got[0], bool)
        and same(list(got[1]) if isinstance(got[1], (list, tuple)) else got[1], want[1])
        and got[0] == want[0]
    ),
    misreadings=[
        Misreading(
            lambda runs: (len(_false_approvals(runs)[1]), _false_approvals(runs)[1]),
            "That counts the tasks with a false approval: count the APPROVED reviews of failing drafts.",
        ),
        Misreading(
            lambda runs: (
                sum(
                    bool(r.accepted and not get_task(t).run(r.final_code).passed)
                    for t, r in runs.items()
                ),
                sorted(
                    t
                    for t, r in runs.items()
                    if r.accepted and not get_task(t).run(r.final_code).passed
                ),
            ),
            "That judges each run's final code: judge the draft each review approved (judge_the_judge).",
        ),
        Misreading(
            lambda runs: (
                sum(a for t, r in runs.items() for _, a, _ in judge_the_judge(get_task(t), r)),
                _false_approvals(runs)[1],
            ),
            "That is every APPROVED, including drafts that pass.",
        ),
        Misreading(
            lambda runs: (
                sum(not p for t, r in runs.items() for _, _, p in judge_the_judge(get_task(t), r)),
                _false_approvals(runs)[1],
            ),
            "That counts every review of a failing draft, approved or not: count only the APPROVED ones.",
        ),
        Misreading(
            lambda runs: (
                _false_approvals(runs)[0],
                [t for t in runs if t in _false_approvals(runs)[1]],
            ),
            "The right tasks, but not sorted.",
        ),
    ],
).register("02.5")


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
    """Exercise 6: count_false on made-up runs (two false approvals in one run; an approved turn with no code after
    a right draft), then on section 3's runs and section 4's own_runs."""
    ids = {t.id for t in course_tasks()}
    for name, rs in (("runs", runs), ("own_runs", own_runs)):
        if not isinstance(rs, Mapping) or set(rs) != ids:
            return False, f"pass `{name}` as it is: one maker-checker run per course task."
    problem = FALSE_APPROVALS.problem(count_false)
    if problem:
        return False, problem
    for name, rs in (("runs", runs), ("own_runs", own_runs)):
        got, want = count_false(rs), _false_approvals(rs)
        if not FALSE_APPROVALS.equal(got, want):
            return False, f"count_false({name}) returned {short(got)}; expected {want}."
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
        seen.append(([dict(m) for m in messages], dict(params)))
        evaluation = critic.evaluate(
            task, extract_code(messages[-1]["content"], task.entry_point).code
        )
        return FakeReply(_visible_review(evaluation), 0, 0)

    return review


def _fresh_run(fresh_chat: Callable[..., object], task_id: str, *drafts: str) -> dict:
    """fresh_chat inside the package's loop, its generator scripted with `drafts` in turn: what the loop asked it,
    what reached the chat behind it, the reviews, and the run."""
    task = get_task(task_id)
    inner, reviews, asked, changed = ScriptedChat({"generator": list(drafts)}), [], [], []
    fresh = fresh_chat(_checks_reviewer(inner, task, reviews))

    def front(
        messages, role, **params
    ):  # what the loop asks fresh_chat for, a reviewer's or first draft's
        if role == "reviewer" or len(messages) == 2:  # call with a parameter of its own to pass on
            params = {**params, "max_tokens": 384}
        asked.append((role, [dict(m) for m in messages], dict(params)))
        reply = fresh(messages, role=role, **params)
        if messages != asked[-1][1]:
            changed.append(role)
        return reply

    reached, run = offline(
        lambda: maker_checker(front, task.prompt(), entry_point=task.entry_point)
    )
    return {
        "reached": reached,
        "changed": changed,
        "asked": asked,
        "sent": inner.calls,
        "reviews": reviews,
        "run": run,
    }


def _fresh_rules(case: Case, got: dict) -> str | None:
    """What is wrong with one scripted run of fresh_chat, or None; expectations from the case's drafts."""
    task_id, *wrong, right = case.args
    task, asked, run = get_task(task_id), got["asked"], got["run"]
    if got["reached"]:
        return f"fresh_chat {REAL_CALL}"
    if got["changed"]:
        return (
            f"fresh_chat changed the messages it was given (a {got['changed'][0]} call): they are your loop's thread, "
            "which every later call re-sends. Build a new list instead."
        )
    sent = [c for c in got["sent"] if c.role == "generator"]
    turns = [m for role, m, _ in asked if role == "generator"]
    if len(sent) != len(turns) or any(c.role != "generator" for c in got["sent"]):
        return (
            f"on {task_id}, the loop asked for {len(turns)} generator turns and the chat behind fresh_chat "
            f"received {len(sent)} generator calls ({[c.role for c in got['sent']]}): one call per turn, in the "
            "generator's role."
        )
    if [(m, p) for role, m, p in asked if role == "reviewer"] != got["reviews"]:
        return (
            "a reviewer's request was changed on its way (its messages or its sampling): fresh_chat passes every "
            "other role's call unchanged."
        )
    if sent[0].messages != turns[0] or sent[0].params != asked[0][2]:
        return (
            f"on {task_id}, the first draft's request was changed ({short(sent[0].messages[-1]['content'])}, "
            f"{sent[0].params}): pass it on as it comes, so the first draft stays lesson 01's one-shot draft."
        )
    drafts = [(st.code or "").strip() for st in run.steps if st.role == "generator"]
    if drafts != [extract_code(d, task.entry_point).code.strip() for d in (*wrong, right)]:
        return f"on {task_id} the loop's drafts are not the replies its chat gave: return each reply as it comes."
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
    return None


def _fresh_chat_key(chat: Callable[..., object]) -> Callable[..., object]:
    """A right fresh_chat: a revision is a new request (the task and the latest review) at 0.6, seeds 42, 43, ..."""
    seeds = iter(range(42, 100))

    def fresh(messages, role="generator", **params):
        if role != "generator" or len(messages) == 2:
            return chat(messages, role=role, **params)
        ask = f"{messages[1]['content']}\n\nAn earlier solution was checked:\n{messages[-1]['content']}"
        return chat(generator_messages(ask), role="generator", temperature=0.6, seed=next(seeds))

    return fresh


FRESH = Properties(
    "fresh_chat",
    [Case(case) for case in FRESH_CASES],
    rules=[_fresh_rules],
    reference=lambda task_id, *drafts: _fresh_run(_fresh_chat_key, task_id, *drafts),
)


fresh_revision = FRESH.exercise(
    "02.8",
    "fresh_revision",
    hints=(
        "fresh_chat returns a function (messages, role, **params). A generator call whose thread is only the task "
        "(len(messages) == 2) is the first draft: pass it on unchanged. Every other role: unchanged too.",
        "for a revision, build a new request: the generator's system message, then one user message with the task "
        "(messages[1]['content']) and the latest review (messages[-1]['content']), never the old code; and call "
        "chat(..., role='generator', temperature=0.6, seed=...) with a seed of its own for each revision.",
    ),
    adapt=lambda fresh_chat: lambda task_id, *drafts: _fresh_run(fresh_chat, task_id, *drafts),
    passed=(
        "On 2 scripted tasks your first draft went out as lesson 01's request, and each revision carried the task "
        "and the failed checks, no old code, and was a new sample."
    ),
)
