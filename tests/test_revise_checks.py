"""The checks of the revise steps the learner designs (lesson 02's `fresh_chat`, lesson 03's `fresh`): answers
written several ways pass; each rule the checks read from the requests fails the answer that breaks it, with
its own message."""

from __future__ import annotations

from course_checks import lesson02, lesson03
from reflect.tasks.extract import extract_code
from reflect.tasks.prompts import GENERATOR_PROMPT


def chat_wrapper(build):
    """A fresh_chat from `build(chat, messages, n)`, which returns (messages, params) of revision n."""

    def fresh_chat(chat):
        seen = []

        def wrapped(messages, role, **params):
            if role != "generator" or len(messages) == 2:
                return chat(messages, role=role, **params)
            seen.append(1)
            sent, own = build(messages, len(seen))
            return chat(sent, role=role, **own)

        return wrapped

    return fresh_chat


def one_user(text):
    return [{"role": "system", "content": GENERATOR_PROMPT}, {"role": "user", "content": text}]


RIGHT_02 = {
    "one user message, seeds counted": lambda m, n: (
        one_user(f"{m[1]['content']}\n\nChecks:\n{m[-1]['content']}"),
        {"temperature": 0.6, "seed": 42 + n},
    ),
    "task and review as two messages, seed from the thread": lambda m, n: (
        [m[0], m[1], {"role": "user", "content": m[-1]["content"]}],
        {"temperature": 1.0, "seed": len(m)},
    ),
}
WRONG_02 = {
    "the old code beside the review": (
        lambda m, n: (
            one_user(f"{m[1]['content']}\n{m[-2]['content']}\n{m[-1]['content']}"),
            {"temperature": 0.6, "seed": n},
        ),
        "earlier draft's code",
    ),
    "the same request after the same review": (
        lambda m, n: (one_user(f"{m[1]['content']}\n{m[-1]['content']}"), {}),
        "temperature above 0",
    ),
    "a seed at temperature 0": (
        lambda m, n: (one_user(f"{m[1]['content']}\n{m[-1]['content']}"), {"seed": n}),
        "temperature above 0",
    ),
    "at temperature 0, the revision number in the words": (
        lambda m, n: (
            one_user(f"{m[1]['content']}\n\nTry {n}. These failed:\n{m[-1]['content']}"),
            {},
        ),
        "temperature above 0",
    ),
    "a temperature given as a string": (
        lambda m, n: (
            one_user(f"{m[1]['content']}\n{m[-1]['content']}"),
            {"temperature": "0.6", "seed": n},
        ),
        "temperature above 0",
    ),
    "seeds that repeat every other revision": (
        lambda m, n: (
            one_user(f"{m[1]['content']}\n{m[-1]['content']}"),
            {"temperature": 0.6, "seed": n % 2},
        ),
        "its own seed",
    ),
    "the thread edited in place": (
        lambda m, n: (m.__setitem__(slice(2, None), []) or m, {"temperature": 0.6, "seed": n}),
        "changed the messages",
    ),
    "the first review, not the latest": (
        lambda m, n: (
            one_user(f"{m[1]['content']}\n{m[3]['content']}"),
            {"temperature": 0.6, "seed": n},
        ),
        "latest feedback",
    ),
    "no task": (
        lambda m, n: (one_user(m[-1]["content"]), {"temperature": 0.6, "seed": n}),
        "does not carry the task",
    ),
}


def test_fresh_chat_written_several_ways_passes():
    for name, build in RIGHT_02.items():
        passed, message, _ = lesson02.fresh_revision.evaluate(chat_wrapper(build))
        assert passed, (name, message)


def test_each_broken_rule_of_fresh_chat_is_failed_and_named():
    for name, (build, said) in WRONG_02.items():
        passed, message, _ = lesson02.fresh_revision.evaluate(chat_wrapper(build))
        assert not passed and said in message, (name, message)


def test_fresh_chat_that_rewrites_the_first_draft_or_the_review_is_failed():
    def all_generator_calls(chat):
        return lambda messages, role, **params: (
            chat(one_user(messages[-1]["content"]), role=role, temperature=0.6)
            if role == "generator"
            else chat(messages, role=role, **params)
        )

    passed, message, _ = lesson02.fresh_revision.evaluate(all_generator_calls)
    assert not passed and "first draft's request was changed" in message

    def touches_reviews(chat):
        def wrapped(messages, role, **params):
            if role == "reviewer":
                return chat(messages[:2], role=role)
            return chat(messages, role=role, **params)

        return wrapped

    passed, message, _ = lesson02.fresh_revision.evaluate(touches_reviews)
    assert not passed and "reviewer's request was changed" in message

    def resamples_reviews(chat):  # the reviewer's messages as they come, its sampling not
        def wrapped(messages, role, **params):
            if role == "reviewer":
                return chat(messages, role=role, **{**params, "temperature": 0.7, "seed": 7})
            return chat(messages, role=role, **params)

        return wrapped

    passed, message, _ = lesson02.fresh_revision.evaluate(resamples_reviews)
    assert not passed and "reviewer's request was changed" in message and "sampling" in message


def revise(make, role="generator"):
    """A lesson-03 revise step whose one call is `make(task, feedback, n)` -> (messages, params)."""

    def fresh(chat, task, code, feedback, n):
        messages, params = make(task, feedback, n, code)
        return extract_code(chat(messages, role=role, **params).text, task.entry_point).code

    return fresh


RIGHT_03 = {
    "generator, seed from n": (
        lambda t, f, n, c: (one_user(f"{t.prompt()}\n{f}"), {"temperature": 0.6, "seed": 41 + n}),
        "generator",
    ),
    "refiner, its own system prompt": (
        lambda t, f, n, c: (
            [
                {"role": "system", "content": "Solve it."},
                {"role": "user", "content": f"{t.prompt()}\n\nTests:\n{f}"},
            ],
            {"temperature": 0.9, "seed": n},
        ),
        "refiner",
    ),
}
WRONG_03 = {
    "shows the old code": (
        lambda t, f, n, c: (one_user(f"{t.prompt()}\n{c}\n{f}"), {"temperature": 0.6, "seed": n}),
        "earlier draft's code",
    ),
    "one seed for every draft": (
        lambda t, f, n, c: (one_user(f"{t.prompt()}\n{f}"), {"temperature": 0.6, "seed": 1}),
        "its own seed",
    ),
    "temperature 0": (
        lambda t, f, n, c: (one_user(f"{t.prompt()}\n{f}"), {"temperature": 0, "seed": n}),
        "temperature above 0",
    ),
    "blind": (
        lambda t, f, n, c: (one_user(t.prompt()), {"temperature": 0.6, "seed": n}),
        "failed checks",
    ),
}


def test_fresh_written_several_ways_passes():
    for name, (make, role) in RIGHT_03.items():
        passed, message, _ = lesson03.fresh_revise.evaluate(revise(make, role))
        assert passed, (name, message)


def test_each_broken_rule_of_fresh_is_failed_and_named():
    for name, (make, said) in WRONG_03.items():
        passed, message, _ = lesson03.fresh_revise.evaluate(revise(make))
        assert not passed and said in message, (name, message)
    passed, message, _ = lesson03.fresh_revise.evaluate(revise(WRONG_03["blind"][0], role="critic"))
    assert not passed and "'generator' or the 'refiner'" in message

    def reply_text(chat, task, code, feedback, n):
        return chat(
            one_user(f"{task.prompt()}\n{feedback}"), role="generator", temperature=0.6, seed=n
        ).text

    passed, message, _ = lesson03.fresh_revise.evaluate(reply_text)
    assert not passed and "code extracted from the reply" in message


def test_sampling_that_is_greedy_in_effect_or_not_a_number_is_failed():
    for params in (
        {"temperature": 1e-12, "seed": 1},
        {"temperature": float("nan"), "seed": 1},
        {"temperature": 50},
    ):
        passed, message, _ = lesson03.fresh_revise.evaluate(
            revise(
                lambda t, f, n, c, p=params: (
                    one_user(f"{t.prompt()}\n{f}"),
                    {**p, "seed": p.get("seed", n) + n},
                )
            )
        )
        assert not passed and "temperature above 0" in message, params
    passed, message, _ = lesson03.fresh_revise.evaluate(
        revise(
            lambda t, f, n, c: (
                one_user(f"{t.prompt()}\n{f}"),
                {"temperature": 0.6, "seed": 0.1 * n},
            )
        )
    )
    assert not passed and "a whole number" in message


def test_a_reviewer_that_approves_whatever_has_no_fail_line_is_failed():
    from reflect.judging import TestGroundedCritic
    from reflect.testing import FakeReply

    def evidence_chat(chat, task):
        def wrapped(messages, role, **params):
            if role != "reviewer":
                return chat(messages, role=role, **params)
            code = extract_code(
                messages[-1]["content"].removeprefix("[Generator]: "), task.entry_point
            ).code
            feedback = TestGroundedCritic().evaluate(task, code).feedback
            return FakeReply("APPROVED" if "FAIL" not in feedback else feedback, 0, 0)

        return wrapped

    passed, message, _ = lesson02.evidence.evaluate(evidence_chat)
    assert not passed and "did not load" in message  # the draft that does not load was approved


def test_a_memory_entry_in_its_own_words_passes_and_one_with_the_hidden_tests_fails():
    from course_checks import lesson05

    def reworded(chat, task, code, evidence, judged):
        return "\n".join(
            f"{a.removeprefix('assert ').partition(' == ')[0]} should return {a.partition(' == ')[2]}, got {got}"
            for a, got in evidence.failed
        )

    assert lesson05.memory_entry.evaluate(reworded)[0]

    def leaks(chat, task, code, evidence, judged):  # the task's hidden tests in memory
        return reworded(chat, task, code, evidence, judged) + task.tests

    passed, message, _ = lesson05.memory_entry.evaluate(leaks)
    assert not passed and "hidden test the agent never ran" in message


def test_one_factor_needs_the_loop_run_with_fresh_with_code_and_a_revision():
    from course_notebook import DraftLog, Sweep
    from course_notebook.drafts import Draft
    from reflect.tasks.task import get_task

    fresh = revise(
        lambda t, f, n, c: (one_user(f"{t.prompt()}\n{f}"), {"temperature": 0.6, "seed": 41 + n})
    )
    with_code = revise(
        lambda t, f, n, c: (
            one_user(f"{t.prompt()}\n```python\n{c}```\n{f}"),
            {"temperature": 0.6, "seed": 41 + n},
        )
    )
    task = get_task("flatten")

    def swept(*drafts):
        log = DraftLog(print, task)
        log.drafts.extend(drafts)
        return Sweep({"flatten": log}, {"flatten": False})

    from reflect.judging.critics import TestGroundedCritic

    first = Draft("generator", one_user(task.prompt()), "", "def flatten(x):\n    return x\n")
    failed = TestGroundedCritic().evaluate(task, first.code).feedback
    by_fresh = Draft(
        "generator",
        one_user(f"{task.prompt()}\n```python\n{first.code}```\n{failed}"),
        "",
        "def flatten(x):\n    return []\n",
    )
    textbook = Draft(
        "refiner",
        [{"role": "system", "content": "You improve"}, {"role": "user", "content": first.code}],
        "",
        "y",
    )
    repairs = swept(first, by_fresh)  # fresh's run rejected flatten's first draft
    assert lesson03.one_factor.evaluate(fresh, with_code, swept(first, by_fresh), repairs)[0]
    passed, message, _ = lesson03.one_factor.evaluate(
        fresh, with_code, swept(first, textbook), repairs
    )
    assert not passed and "revise=fresh_with_code" in message
    passed, message, _ = lesson03.one_factor.evaluate(fresh, with_code, swept(first), repairs)
    assert not passed and "no revision" in message
    # an eighth fresh read's: with_code run with another critic (its feedback is no failed check), or past an
    # acceptance at the default threshold (a second factor beside the old code)
    by_llm = Draft("generator", one_user(f"{task.prompt()}\n```python\n{first.code}```\nScore 4: use recursion."),
                   "", "def flatten(x):\n    return []\n")  # fmt: skip
    passed, message, _ = lesson03.one_factor.evaluate(
        fresh, with_code, swept(first, by_llm), repairs
    )
    assert not passed and "tests critic's failures" in message, message
    right = "def flatten(nested):\n    return [y for x in nested for y in (flatten(x) if isinstance(x, list) else [x])]\n"
    accepted = Draft("generator", one_user(task.prompt()), "", right)
    again = Draft("generator", one_user(f"{task.prompt()}\n```python\n{right}```"), "", right)
    passed, message, _ = lesson03.one_factor.evaluate(
        fresh, with_code, swept(first, accepted, again), repairs
    )
    assert not passed and "went on past a draft" in message, message
