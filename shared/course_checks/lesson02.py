"""Lesson 02's exercise checks: a rule in the reviewer's prompt, a token budget, a trimmed thread, false approvals."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from reflect.judging.hidden import judge_the_judge
from reflect.records import Run, Stop
from reflect.strategies.maker_checker import maker_checker
from reflect.tasks.prompts import GENERATOR_PROMPT, REVIEWER_PROMPT
from reflect.tasks.task import Task, course_tasks, get_task
from reflect.testing import FakeReply, ScriptedChat

from . import exercise, offline

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
    "02.1",
    hints=(
        "probe returns what maker_checker returns, a Run (its .accepted is the verdict). The check gives probe a "
        "scripted reviewer and reads what it was sent, so probe must send the review through the chat it is given.",
        "inside probe, give maker_checker a chat function of your own: it answers the 'generator' role with a FakeReply "
        "of the draft (no model call) and passes every other role on to chat. Run it on the merge_sorted task, with "
        "reviewer_prompt, for one iteration.",
    ),
    answer="my_reviewer_prompt = REVIEWER_PROMPT + (' Reject the code if it calls sorted() or list.sort(): the inputs are '\n"
    "                                        'already sorted and must be merged in one pass.')\n\n\n"
    "def probe(chat, reviewer_prompt, draft):\n"
    "    task = get_task('merge_sorted')\n\n"
    "    def scripted(messages, role):\n"
    "        return FakeReply(draft, 0, 0) if role == 'generator' else chat(messages, role)\n\n"
    "    return maker_checker(scripted, task.prompt(), entry_point=task.entry_point,\n"
    "                         reviewer_prompt=reviewer_prompt, max_iterations=1)\n\n\n"
    "on_sorted = probe(chat, my_reviewer_prompt, SORTED_DRAFT)\n"
    "on_merge = probe(chat, my_reviewer_prompt, MERGE_DRAFT)\n"
    "rule_obeyed = not on_sorted.accepted and on_merge.accepted",
)
def requirement(
    probe: Callable[[Chat, str, str], object],
    my_reviewer_prompt: str | None,
    on_sorted: object,
    on_merge: object,
    rule_obeyed: object,
) -> tuple[bool, str] | tuple[bool, str, bool]:
    """Exercise 1: probe on a scripted reviewer, a rule added to the course prompt, and rule_obeyed as the probes
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


def _budget_cases() -> list[tuple[ScriptedChat, int, tuple[str, int]]]:
    def scripted(reviews: list[str]) -> ScriptedChat:
        return ScriptedChat(
            {
                "generator": [FakeReply("```python\ndef fibonacci(n): pass\n```", 100, 50)] * 4,
                "reviewer": [FakeReply(r, 120, 30) for r in reviews],
            }
        )

    return [
        (scripted(["Fix it."] * 4), 10_000, ("max_iterations", 1200)),
        (scripted(["Fix it."] * 4), 400, ("budget", 450)),
        (
            scripted(["Fix it."] * 4),
            450,
            ("budget", 450),
        ),  # reaching the budget is enough: >=, not >
        (scripted(["Fix it.", "APPROVED"]), 10_000, ("approved", 600)),
    ]


@exercise(
    "02.2",
    hints=(
        "add reply.prompt_tokens + reply.completion_tokens after every call, the generator's and the reviewer's, and "
        "compare the total with the budget right after each call.",
        "the thread starts with the task's statement as a user message, as in section 2. Stop with the reason "
        "'approved' when the strict reading (strict_sentinel) accepts the review, 'budget' as soon as the tokens used "
        "reach the budget, and 'max_iterations' after the last iteration; each time return the reason and the tokens used.",
    ),
    answer="def budget_loop(chat, task, budget):\n"
    "    shared, used = [{'role': 'user', 'content': task.prompt()}], 0\n"
    "    for _ in range(MAX_ITERATIONS):\n"
    "        for role, system in (('generator', GENERATOR_PROMPT), ('reviewer', REVIEWER_PROMPT)):\n"
    "            reply = chat([{'role': 'system', 'content': system}, *shared], role=role)\n"
    "            used += reply.prompt_tokens + reply.completion_tokens\n"
    "            shared.append({'role': 'assistant', 'content': f'[{role.title()}]: {reply.text}'})\n"
    "            if role == 'reviewer' and strict_sentinel(reply.text):\n"
    "                return 'approved', used\n"
    "            if used >= budget:\n"
    "                return 'budget', used\n"
    "    return 'max_iterations', used",
)
def token_budget(budget_loop: Callable[[Chat, Task, int], object]) -> tuple[bool, str]:
    """Exercise 2: budget_loop on a course Task against scripted agents: stop reasons, tokens, and what each role saw."""
    task = get_task("fibonacci")
    cases = _budget_cases()
    reached, got = offline(lambda: [budget_loop(chat, task, budget) for chat, budget, _ in cases])
    if reached:
        return False, f"budget_loop {REAL_CALL}"
    got = [tuple(g) if isinstance(g, (tuple, list)) else g for g in got]
    if not cases[0][0].calls:
        return (
            False,
            f"budget_loop(chat, task, budget) made no call to chat and returned {got[0]!r}.",
        )
    first = cases[0][0].calls[0].messages
    if len(first) < 2 or first[0] != {"role": "system", "content": GENERATOR_PROMPT}:
        return (
            False,
            "the generator's first call should send GENERATOR_PROMPT as its system message, then the thread.",
        )
    if first[1] != {"role": "user", "content": task.prompt()}:
        return False, (
            f"the thread should start with the task's statement, task.prompt() (budget_loop gets a Task, "
            f"as in section 2), not {str(first[1].get('content'))[:60]!r}."
        )
    reviewer = next((c.messages for c in cases[0][0].calls if c.role == "reviewer"), [])
    if not reviewer or reviewer[0] != {"role": "system", "content": REVIEWER_PROMPT}:
        return (
            False,
            "the reviewer's call should send REVIEWER_PROMPT as its system message, then the shared thread.",
        )
    if not any("def fibonacci(n): pass" in str(m.get("content")) for m in reviewer):
        return False, (
            "the reviewer's first call should contain the generator's draft: append every reply, the "
            "generator's too, to the shared thread."
        )
    second = [c.messages for c in cases[0][0].calls if c.role == "generator"][1:2]
    if not second or not any("Fix it." in str(m.get("content")) for m in second[0]):
        return (
            False,
            "the generator's second call did not see the review: append every reply to the shared thread.",
        )
    want = [w for *_, w in cases]
    if got != want:
        budgets = ", ".join(str(b) for _, b, _ in cases)
        return False, (
            f"on scripted agents (generator 150 tokens a call, reviewer 150) with budgets {budgets}: "
            f"expected {want}, got {got}."
        )
    return (
        True,
        "Stops on approval, on the budget, or on the valve, and counts every call's tokens.",
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
    "02.3",
    hints=(
        "trim gets the whole thread and returns the messages to send: message 0 is the task, the rest alternate "
        "draft and review. A thread of three messages or fewer comes back as it is.",
        "slice it: the first message, then the last two of the messages after it; then run section 5's loop again "
        "with trim=trim.",
    ),
    answer="def trim(thread):\n"
    "    return thread[:1] + thread[1:][-2:]\n\n\n"
    "trimmed = maker_checker(chat, stubborn_task.prompt(), entry_point=stubborn_task.entry_point,\n"
    "                        is_approved=lambda review: False, trim=trim)",
)
def trim_thread(
    trim: Callable[[list[dict]], list[dict]], trimmed: object
) -> tuple[bool, str] | tuple[bool, str, bool]:
    """Exercise 3: trim on made-up threads, and the four-round run of section 5 whose prompt tokens show the trim.
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
                "trim is right; now run section 5's loop again (stubborn_task, approval ignored) with "
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
                f"trim is right, but trimmed should be section 5's run: roman_to_int, four full rounds with "
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
                "trim is right, but trimmed should run on section 5's shared thread (the default "
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
    "02.4",
    hints=(
        "judge_the_judge(get_task(tid), run) gives one (iteration, approved, passed) triple per review of that run: "
        "every review, not only the first.",
        "a false approval is a triple with approved True and passed False: count them over every run, and collect the "
        "ids of the tasks where at least one occurs, sorted. Work only from the runs you are given.",
    ),
    answer="def count_false(runs):\n"
    "    false_approvals, tasks = 0, []\n"
    "    for tid, r in runs.items():\n"
    "        bad = [v for v in judge_the_judge(get_task(tid), r) if v[1] and not v[2]]\n"
    "        false_approvals += len(bad)\n"
    "        if bad:\n"
    "            tasks.append(tid)\n"
    "    return false_approvals, sorted(tasks)",
)
def count_false_approvals(
    count_false: Callable[[Mapping[str, Run]], object],
    runs: Mapping[str, Run],
    own_runs: Mapping[str, Run],
) -> tuple[bool, str]:
    """Exercise 4: count_false on section 4's runs, section 5's own_runs and made-up runs, against the hidden tests'
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
        f"count_false works on made-up runs too. Section 4's runs: {count} false approval(s), on "
        f"{', '.join(tasks) or 'no task'}; the user-role runs: {own[0]}, on {', '.join(own[1]) or 'no task'}."
    )
