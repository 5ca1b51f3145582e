"""Lesson 00's checks on answers from a second fresh learner read: each wrong one fails with a message that says
why, and right ones written differently pass."""

from __future__ import annotations

import re

import pytest

from course_checks import lesson00 as ex
from reflect.model.accounting import estimate_cost


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: t.strip().isdigit(),
        lambda t: re.fullmatch(r"\s*\d+\s*", t) is not None,
        lambda t: bool(t.split()) and len(t.split()) == 1 and t.split()[0].isdigit(),
    ],
)
def test_only_a_number_passes_true_or_false(fn):
    assert ex.NUMBERS.problem(fn) is None


@pytest.mark.parametrize(
    ("fn", "said"),
    [
        (lambda t: t.replace(" ", "").strip().isdigit(), "'1 2'"),  # spaces inside the number
        (lambda t: re.fullmatch(r"\s*\d+\s*", t), "re.Match"),  # a match, not True
        (lambda t: t.strip().isdigit() and t.strip(), "'4'"),  # the text, not True
    ],
)
def test_only_a_number_fails_inner_spaces_and_values_that_are_only_truthy(fn, said):
    problem = ex.NUMBERS.problem(fn)
    assert problem is not None and said in problem, problem


def _bill(keep):
    return lambda records, model: sum(
        estimate_cost("openai", model, r.prompt_tokens, r.completion_tokens)
        for r in records
        if keep(r)
    )


def test_bill_counts_cached_calls_and_calls_that_wrote_nothing():
    assert ex.BILL.problem(_bill(lambda r: True)) is None
    for keep in (lambda r: not r.cached, lambda r: r.completion_tokens > 0):
        assert "cases differ" in ex.BILL.problem(_bill(keep))


def test_was_truncated_returns_a_bool_not_the_reason_or_the_text():
    assert ex.TRUNCATED.problem(lambda r: r.finish_reason in ("length", "max_tokens")) is None
    assert (
        ex.TRUNCATED.problem(lambda r: r.finish_reason == "length" and r.finish_reason) is not None
    )
    assert ex.TRUNCATED.problem(lambda r: r.finish_reason == "length" and r.text) is not None


def test_a_reason_compared_by_identity_fails():
    """A third fresh read: `reply.finish_reason is "length"` passed the made-up replies (their reasons were
    interned literals) and then failed on the lesson's reply, read from JSON. The made-up reasons are new string
    objects now, as the server's are."""
    import operator

    problem = ex.TRUNCATED.problem(lambda r: operator.is_(r.finish_reason, "length"))
    assert problem and "returned False; expected True" in problem, problem
    assert ex.TRUNCATED.problem(lambda r: r.finish_reason == "length") is None


def test_a_bill_of_all_but_the_last_call_fails():
    """00.2 (a fifth fresh read's): gpt4o_cost billing the ledger's first 6 of 7 calls (records[:-1], or one call
    filtered out) fails and says how many calls the ledger holds; every call passes."""
    from course_checks import lesson00
    from reflect.model.accounting import CallRecord, estimate_cost

    def bill(records, model):
        return sum(
            estimate_cost("openai", model, r.prompt_tokens, r.completion_tokens) for r in records
        )

    records = [CallRecord("generator", 40 + n, 9 + n, 0.1, "local", "m") for n in range(7)]
    assert lesson00.hosted_bill.evaluate(bill, bill(records, "gpt-4o"), records)[0]
    passed, message, _ = lesson00.hosted_bill.evaluate(bill, bill(records[:-1], "gpt-4o"), records)
    assert not passed and "first 6 calls, and it holds 7" in message, message


def test_a_reply_typed_in_is_no_reply_of_the_model():
    """00.1 and 00.3 (a seventh fresh read's): a `Reply` made by hand, with the text or the cut the exercise asks
    for, fails: the check finds no call in the ledger with its role, tokens and latency; the model's reply passes."""
    from reflect.model.accounting import CallRecord
    from reflect.model.llm import Reply

    def number(text):
        return text.strip().isdigit()

    asked = Reply("4", "probe", "m", 40, 1, 0.25, "stop")
    records = [CallRecord("probe", 40, 1, 0.25, "local", "m")]
    assert ex.vowels.evaluate(number, asked, records)[0]
    typed = Reply("4", "probe", "m", 40, 1, 0.3, "stop")
    passed, message, _ = ex.vowels.evaluate(number, typed, records)
    assert not passed and "no call in conn.ledger" in message, message

    def cut(reply):
        return reply.finish_reason == "length"

    draft = Reply("Sure.", "generator", "m", 30, 2, 0.1, "stop")
    long = Reply("Recursion is a technique where a", "probe", "m", 20, 8, 0.5, "length")
    logged = [CallRecord("probe", 20, 8, 0.5, "local", "m")]
    assert ex.truncated.evaluate(cut, long, draft, logged)[0]
    passed, message, _ = ex.truncated.evaluate(cut, long, draft, records)
    assert not passed and "no call in conn.ledger gave long_answer" in message, message


def test_a_reply_guessed_from_an_ellipsis_and_a_bill_by_backend_fail():
    """00.3 and 00.2 (a seventh fresh read's): '...' at the end of a finished reply is no cut; a bill that prices each
    call by the backend that answered it prices the local calls at 0."""
    problem = ex.TRUNCATED.problem(lambda r: r.finish_reason == "length" or r.text.endswith("..."))
    assert problem and "finished on an ellipsis" in problem, problem
    problem = ex.BILL.problem(
        lambda recs, m: sum(
            estimate_cost(r.backend, m, r.prompt_tokens, r.completion_tokens) for r in recs
        )
    )
    assert problem and "backend that answered it" in problem, problem


def test_a_stop_rule_returning_the_packages_stop_members_passes():
    """00.4 (a seventh fresh read's right answer): `Stop` is a StrEnum, so Stop.TOKEN_BUDGET == 'token_budget';
    the strings the statement names, as its members, are right. A number or bytes is not."""
    from reflect.records import Stop

    def stop(approved, rounds, tokens, max_rounds, budget):
        if approved:
            return Stop.ACCEPTED
        if tokens >= budget:
            return Stop.TOKEN_BUDGET
        return Stop.MAX_ITERATIONS if rounds >= max_rounds else None

    assert ex.STOP.problem(stop) is None
    assert ex.STOP.problem(lambda *a: (s := ex._stop_truth(*a)) and s.encode()) is not None
