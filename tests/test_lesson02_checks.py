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
