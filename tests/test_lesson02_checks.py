"""Lesson 02's loop check reads the draft the loop returns as code: a loop that returns the fenced reply around it
(the next cell would print a SyntaxError) fails, and the message says to return the code alone."""

from __future__ import annotations

from course_checks import lesson02 as ex
from reflect.tasks.extract import extract_code
from reflect.tasks.prompts import GENERATOR_PROMPT, REVIEWER_PROMPT


def loop_returning(draft_of):
    def maker_checker_loop(chat, task, max_iterations=4):
        thread = [{"role": "user", "content": task.prompt()}]
        draft = ""
        for _ in range(max_iterations):
            gen = chat([{"role": "system", "content": GENERATOR_PROMPT}, *thread], role="generator")
            thread.append({"role": "assistant", "content": f"[Generator]: {gen.text}"})
            draft = draft_of(gen.text, task) or draft
            review = chat(
                [{"role": "system", "content": REVIEWER_PROMPT}, *thread], role="reviewer"
            )
            thread.append({"role": "assistant", "content": f"[Reviewer]: {review.text}"})
            first = next((ln.strip() for ln in review.text.splitlines() if ln.strip()), "")
            if first.strip("*_`#").rstrip(".!") == "APPROVED":
                return draft, True, "approved"
        return draft, False, "max_iterations"

    return maker_checker_loop


def test_a_loop_returning_the_fenced_reply_fails_and_is_told_to_return_the_code():
    right = loop_returning(lambda text, task: extract_code(text, task.entry_point).code)
    fenced = loop_returning(
        lambda text, task: text if extract_code(text, task.entry_point).code else ""
    )
    assert ex.loop.evaluate(right)[0]
    passed, message, _ = ex.loop.evaluate(fenced)
    assert not passed and "the code alone" in message, message


def test_a_reading_by_the_package_or_that_strips_every_final_mark_fails():
    """approved is the learner's reading: calling the package's sentinel reader is refused by name, and a reading
    that strips every final . or ! (one is allowed) fails on the table."""
    from reflect.judging import strict_sentinel

    refused = ex.approved_reading.evaluate(lambda review: strict_sentinel(review))
    assert not refused[0] and "sentinel reader" in refused[1]

    def stripping(review):
        lines = [ln for ln in review.splitlines() if ln.strip()]
        return bool(lines) and lines[0].strip(" *_`#").rstrip(".!").strip(" *_`#") == "APPROVED"

    assert not ex.approved_reading.evaluate(stripping)[0]


def test_counting_every_failing_review_is_named_apart_from_counting_every_approval():
    """Two misreadings of count_false, each named: every review of a failing draft, and every APPROVED."""
    from reflect.judging.hidden import judge_the_judge
    from reflect.tasks.task import get_task

    def rows(runs):
        return [(t, a, p) for t, r in runs.items() for _, a, p in judge_the_judge(get_task(t), r)]

    def failing(runs):
        return sum(not p for _, _, p in rows(runs)), sorted(
            {t for t, a, p in rows(runs) if a and not p}
        )

    def approvals(runs):
        return sum(a for _, a, _ in rows(runs)), sorted(
            {t for t, a, p in rows(runs) if a and not p}
        )

    assert "approved or not" in ex.FALSE_APPROVALS.problem(failing)
    assert "every APPROVED, including drafts that pass" in ex.FALSE_APPROVALS.problem(approvals)


def test_an_evidence_reviewer_approving_at_8_or_charging_tokens_fails_and_is_told_why():
    """02.4 is graded on the reviews inside the package's loop: approving a draft that fails one visible check of
    five (scored 8.2) fails, and so does a review that reports tokens, though every request is the key's."""
    from reflect.judging.critics import TestGroundedCritic
    from reflect.testing import FakeReply

    def reviewer(approve_at=10, tokens=0):
        def evidence_chat(chat, task):
            def answer(messages, role):
                if role != "reviewer":
                    return chat(messages, role)
                draft = messages[-1]["content"].removeprefix("[Generator]: ")
                ev = TestGroundedCritic().evaluate(task, extract_code(draft, task.entry_point).code)
                return FakeReply("APPROVED" if ev.score >= approve_at else ev.feedback, tokens, 0)

            return answer

        return evidence_chat

    assert ex.evidence.evaluate(reviewer())[0]
    passed, message, _ = ex.evidence.evaluate(reviewer(approve_at=8))
    assert not passed and "visible checks' feedback" in message, message
    passed, message, _ = ex.evidence.evaluate(reviewer(tokens=5))
    assert not passed and "0 prompt and 0 completion tokens" in message, message
    passed, message, _ = ex.evidence.evaluate(reviewer(approve_at=9))  # a fifth fresh read's
    assert not passed and "HumanEval/69" in message, message


def test_a_fresh_chat_dropping_the_parameters_it_passes_on_fails():
    """02.8 (a fifth fresh read's): the loop's reviewer and first-draft calls carry a parameter, which a fresh_chat
    passing them on must keep."""
    from reflect.tasks.prompts import generator_messages

    def fresh_chat(chat, keep=True):
        seeds = iter(range(42, 100))

        def fresh(messages, role="generator", **params):
            if role != "generator" or len(messages) == 2:
                return chat(messages, role=role, **(params if keep else {}))
            ask = f"{messages[1]['content']}\n\nAn earlier solution was checked:\n{messages[-1]['content']}"
            return chat(
                generator_messages(ask), role="generator", temperature=0.6, seed=next(seeds)
            )

        return fresh

    assert ex.fresh_revision.evaluate(fresh_chat)[0]
    passed, message, _ = ex.fresh_revision.evaluate(lambda chat: fresh_chat(chat, keep=False))
    assert not passed and "changed on its way" in message, message


def test_the_second_fresh_reads_wrong_answers_of_lesson_02_fail_and_its_right_ones_pass():
    """From a second fresh read: an evidence reviewer answering every role but the generator's, and one reading a
    reply's code without the entry point, fail; a trim keeping only the assistant's messages fails; obeyed read from
    the reviews' own verdicts passes, and one finding APPROVED anywhere in a review fails (the made-up outcomes'
    reviews now agree with how the runs stopped)."""
    from reflect.judging import strict_sentinel
    from reflect.judging.critics import TestGroundedCritic
    from reflect.testing import FakeReply

    def reviewer(is_reviewer, read):
        def evidence_chat(chat, task):
            def answer(messages, role, **params):
                if not is_reviewer(role):
                    return chat(messages, role, **params)
                ev = TestGroundedCritic().evaluate(task, read(messages[-1]["content"], task))
                return FakeReply("APPROVED" if ev.score == 10 else ev.feedback, 0, 0)

            return answer

        return evidence_chat

    def entry(text, task):
        return extract_code(text.removeprefix("[Generator]: "), task.entry_point).code

    assert ex.evidence.evaluate(reviewer(lambda role: role == "reviewer", entry))[0]
    not_generator = ex.evidence.evaluate(reviewer(lambda role: role != "generator", entry))[1]
    assert "'summarizer'" in not_generator, not_generator
    anywhere = reviewer(lambda role: role == "reviewer", lambda text, task: extract_code(text).code)
    assert not ex.evidence.evaluate(anywhere)[0]

    def assistant_only(thread):
        return (
            thread
            if len(thread) <= 3
            else [thread[0], *[m for m in thread[1:] if m["role"] == "assistant"][-2:]]
        )

    assert "whatever their role" in ex.trim_thread.evaluate(assistant_only, None)[1]

    def by_verdict(on_sorted, on_merge):
        return not strict_sentinel(on_sorted.judgements[-1].reply) and strict_sentinel(
            on_merge.judgements[-1].reply
        )

    def anywhere_in(on_sorted, on_merge):
        return (
            "APPROVED" not in on_sorted.judgements[-1].reply
            and "APPROVED" in on_merge.judgements[-1].reply
        )

    assert ex.OBEYED.problem(by_verdict) is None
    assert ex.OBEYED.problem(anywhere_in) is not None


def test_trim_must_return_an_empty_thread_whole_and_names_the_misreadings():
    """A fourth fresh read: a trim that indexes thread[0] crashed on an empty thread and passed (a thread of three
    messages or fewer comes back whole, none included)."""
    problem = ex.TRIM.problem(lambda thread: [thread[0], *thread[1:][-2:]])
    assert problem == "trim([]) raised IndexError: list index out of range; expected [].", problem
    assert ex.TRIM.problem(lambda thread: thread[:1] + thread[1:][-2:]) is None
    assert "last three messages" in ex.TRIM.problem(lambda thread: thread[-3:])


def test_the_packages_stop_names_are_not_the_loops_reasons():
    """Two fresh reads passed a loop that returned the package's names, "accepted" and "token_budget", where the
    statement names the loop's reasons "approved" and "budget"."""
    import dataclasses

    def packaged(chat, task, max_iterations=4):
        final, approved, reason = ex._loop_key(chat, task, max_iterations=max_iterations)
        return final, approved, {"approved": "accepted"}.get(reason, reason)

    problem = dataclasses.replace(ex.LOOP, forbid=None).problem(packaged)
    assert "returned the reason 'accepted', the package's name for 'approved'" in problem, problem
    assert dataclasses.replace(ex.LOOP, forbid=None).problem(ex._loop_key) is None


def test_probe_is_graded_on_the_run_it_returns_as_well_as_its_request():
    """The reviewer's request right, then the verdict alone (or another draft's run) returned."""
    from course_checks import lesson02

    def verdict_only(chat, reviewer_prompt, draft):
        return lesson02._probe_key(chat, reviewer_prompt, draft).accepted

    assert "return the loop's Run" in lesson02.PROBE.problem(verdict_only)


def test_a_budget_estimating_a_roles_first_call_by_the_other_roles_fails():
    """02.3 (a seventh fresh read's): before a role's first call its largest call so far is 0; an estimate taken
    from the other role's largest call skips a reviewer call the budget still affords."""
    import json
    from pathlib import Path

    from reflect.tasks.prompts import GENERATOR_PROMPT, REVIEWER_PROMPT

    cells = json.loads(
        (Path(__file__).parents[1] / "solutions" / "02_maker_checker.ipynb").read_text()
    )["cells"]
    keys = {c["metadata"].get("reflect", {}).get("key"): "".join(c["source"]) for c in cells}
    space = {"extract_code": extract_code, "GENERATOR_PROMPT": GENERATOR_PROMPT, "REVIEWER_PROMPT": REVIEWER_PROMPT,
             "MAX_ITERATIONS": 4}  # fmt: skip
    exec(keys["02.1"], space)  # noqa: S102 - the course's own cells
    exec(
        keys["02.3"].replace(
            "largest[role] > budget", "(largest[role] or max(largest.values())) > budget"
        ),
        space,
    )  # noqa: S102
    problem = ex.BUDGET.problem(space["budget_loop"])
    assert problem and "estimated at 0" in problem, problem
