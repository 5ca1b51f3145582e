"""Lesson 00's exercise checks: a number and nothing else, the bill on a hosted model, a cut-off reply, a stop rule."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from reflect.model.accounting import CallRecord, estimate_cost
from reflect.model.llm import Reply

from . import exercise, later
from .spec import Case, Misreading, Values, show

NUMBERS = Values(
    "only_a_number",
    [
        Case((t,))
        for t in (
            "4",
            " 12\n",
            "4.",
            "The answer is 4",
            "four",
            "",
            "4 vowels",
            "-4",
            "4\n5",
            "0",
            "\t7 ",
            "007",
            "+4",
            "-0",
            "1_000",
            "\u00bd",  # ½: numeric, not a digit
            "\u2163",  # Ⅳ
            "123456",
            "  42\n\n\n",
            "1 2",  # spaces around the number only
        )
    ],
    oracle=lambda text: text.strip().isdigit(),
    equal=lambda got, want: got is want,  # True or False, as the statement says, not a match
    misreadings=[
        Misreading(lambda t: t.isdigit(), "Strip the whitespace first: ' 12\\n' is a number."),
        Misreading(
            lambda t: any(c.isdigit() for c in t),
            "A digit somewhere is not a number and nothing else.",
        ),
    ],
).register("00.1")


@exercise(
    "00.1",
    hints=(
        "strip the whitespace first, then check that what is left is one or more digits.",
        "what does your function return for '', ' 12\\n' and '-4'? (str.strip and str.isdigit are worth a look.)",
    ),
)
def vowels(
    only_a_number: Callable[[str], object], answer: Reply | None, records: Sequence[CallRecord]
) -> tuple[bool, str]:
    """Exercise 1: only_a_number on made-up replies (True or False), then on the model's, a call in the ledger."""
    problem = NUMBERS.problem(only_a_number)
    if problem:
        return False, problem
    if not isinstance(answer, Reply) or not _asked(answer, records):
        return later(
            "only_a_number is right; now store the model's Reply in `answer` (answer = conn.chat(...))"
            + (": no call in conn.ledger gave this one." if isinstance(answer, Reply) else ".")
        )
    if not only_a_number(answer.text):
        return later(
            f"only_a_number is right, but the model's reply {answer.text!r} is not only a number: "
            "put the format rule in the system message."
        )
    return True, (
        f"The model answered {answer.text.strip()!r} and only_a_number accepts it "
        "(the right count is 4: the check asks for a number, not for the right one)."
    )


def _asked(reply: Reply, records: Sequence[CallRecord]) -> bool:
    """Did the model give `reply`: is there a call in the ledger of its role, tokens and latency?"""
    said = (reply.role, reply.prompt_tokens, reply.completion_tokens, reply.latency_s)
    return any((r.role, r.prompt_tokens, r.completion_tokens, r.latency_s) == said for r in records)


# sections 3 to 5 make 6 calls through conn.chat (exercise 1 may add one)
CALLS_BEFORE_EXERCISE_2 = 6


def _price(records: Sequence[CallRecord], model: str) -> float:
    return sum(
        estimate_cost("openai", model, r.prompt_tokens, r.completion_tokens) for r in records
    )


_CALLS = [  # priced at a hosted model's rates whatever backend answered them
    CallRecord("generator", 1_000, 200, 1.0, "local", "m"),
    CallRecord("critic", 3_000, 50, 1.0, "openai", "m"),
    CallRecord("probe", 0, 0, 0.1, "openai", "m"),
    CallRecord("reviewer", 10, 4_000, 2.0, "openai", "m"),
]
_BILLED_TOO = [  # a call the request cache answered, and one that wrote nothing: each is still a call
    CallRecord("generator", 1_000, 200, 0.0, "openai", "m", cached=True),
    CallRecord("critic", 700, 0, 0.5, "openai", "m"),
]
BILL = Values(
    "bill",
    [
        Case((recs, m))
        for recs in (
            _CALLS[:3],
            _CALLS,
            _CALLS[3:],
            [],
            [*_CALLS[:2], _CALLS[0]],
            [*_BILLED_TOO, _CALLS[3]],
        )
        for m in ("gpt-4o", "gpt-4o-mini")
    ],
    oracle=_price,
    equal=lambda got, want: isinstance(got, (int, float)) and abs(got - want) <= 1e-12,
    misreadings=[
        Misreading(
            lambda recs, m: estimate_cost(
                "openai", m, sum(r.prompt_tokens + r.completion_tokens for r in recs), 0
            ),
            "Input and output tokens have different prices: price each call's two counts, then add.",
        ),
        Misreading(
            lambda recs, m: sum(
                estimate_cost(r.backend, m, r.prompt_tokens, r.completion_tokens) for r in recs
            ),
            "That prices a call by the backend that answered it (the local model costs nothing): price every "
            "call as if gpt-4o had answered it, estimate_cost('openai', model, ...).",
        ),
    ],
    show=lambda v: f"<{len(v)} calls>" if isinstance(v, list) else show(v),
).register("00.2")


@exercise(
    "00.2",
    hints=(
        "every record has prompt_tokens and completion_tokens: price each call, then add the prices up.",
        "estimate_cost('openai', model, prompt_tokens, completion_tokens) prices one call; input and output tokens "
        "have different prices, so price before you add.",
    ),
)
def hosted_bill(
    bill: Callable[[Sequence[CallRecord], str], float],
    gpt4o_cost: float | None,
    records: Sequence[CallRecord],
) -> tuple[bool, str]:
    """Exercise 2: `bill` on made-up records and two models, and `gpt4o_cost` against the ledger's calls."""
    problem = BILL.problem(bill)
    if problem:
        return False, problem
    if not isinstance(gpt4o_cost, (int, float)):
        return later("bill is right; now set gpt4o_cost = bill(conn.ledger.records, 'gpt-4o').")
    prefixes = [
        sum(
            estimate_cost("openai", "gpt-4o", r.prompt_tokens, r.completion_tokens)
            for r in records[:n]
        )
        for n in range(1, len(records) + 1)
    ]
    seen = max((n for n, p in enumerate(prefixes, 1) if abs(gpt4o_cost - p) <= 1e-12), default=None)
    if seen is None:
        return later(
            f"bill is right, but gpt4o_cost = {gpt4o_cost!r} is not the bill of every call in the ledger "
            f"({len(records)} calls)."
        )
    if seen < len(records):
        return later(
            f"bill is right, but gpt4o_cost = {gpt4o_cost!r} is the bill of the ledger's first {seen} calls, and "
            f"it holds {len(records)}: bill every call in conn.ledger.records (if a call came after, run the "
            "cell again)."
        )
    if seen < CALLS_BEFORE_EXERCISE_2:
        return later(
            f"bill is right, and gpt4o_cost = {gpt4o_cost!r} is the bill of the ledger's {seen} calls; the "
            f"lesson makes {CALLS_BEFORE_EXERCISE_2} before this exercise: run sections 3 to 5 first, then this "
            "cell."
        )
    return (
        True,
        f"${gpt4o_cost:.6f} for {len(records)} calls: input and output tokens priced separately.",
    )


TRUNCATED = Values(
    "was_truncated",
    [
        # each reason a new string object, as a reply read from the server's JSON has: `is "length"` says False
        Case((Reply(text, "probe", "m", 20, tokens, 0.1, why.encode().decode()),), note)
        for text, tokens, why, note in (
            ("Lists, sets and dicts.", 8, "length", "ends like a sentence, yet cut"),
            ("x = {1: 'a'}\nprint(x", 7, "stop", "ends oddly, yet finished"),
            ("The answer is", 3, "length", "cut mid-sentence"),
            ("4", 1, "stop", "a short finished reply"),
            ("", 0, "content_filter", "stopped by a filter, not by the cap"),
            ("def f(xs):\n    return len(xs", 12, "length", "cut at 12 tokens"),
            ("Use len() to get a list's length.", 9, "stop", "finished, its text says 'length'"),
            ("Wait...", 3, "stop", "finished on an ellipsis"),
        )
    ],
    oracle=lambda reply: reply.finish_reason == "length",
    equal=lambda got, want: got is want,  # True or False, not the reason or the text
    misreadings=[
        Misreading(
            lambda r: not r.text.rstrip().endswith((".", "!", "?")),
            "The text is no guide: a Reply says why it stopped.",
        ),
    ],
).register("00.3")


@exercise(
    "00.3",
    hints=(
        "the text is no guide: what else does a Reply carry?",
        "a Reply has more fields than its text: print one whole (print(draft)) and compare it with the "
        "cut-off reply `cut`, made under 'When not to use this, and what can go wrong'.",
    ),
)
def truncated(
    was_truncated: Callable[[Reply], bool],
    long_answer: Reply | None,
    draft: Reply,
    records: Sequence[CallRecord],
) -> tuple[bool, str]:
    """Exercise 3: was_truncated on the long answer, on section 3's draft and on two replies whose text misleads."""
    problem = TRUNCATED.problem(was_truncated, also=[Case((draft,), "section 3's draft")])
    if problem:
        return False, problem
    if not isinstance(long_answer, Reply):
        return later(
            "was_truncated is right; now store the reply of a call with max_tokens=8 in `long_answer`."
        )
    if not _asked(long_answer, records):
        return later(
            "was_truncated is right, but no call in conn.ledger gave long_answer: store the reply of a new call "
            "with max_tokens=8."
        )
    if long_answer.completion_tokens != 8:
        return later(
            f"was_truncated is right, but long_answer has {long_answer.completion_tokens} completion tokens: "
            "make a new call with max_tokens=8."
        )
    if long_answer.finish_reason != "length":
        return later(
            f"long_answer finished on its own ({long_answer.finish_reason!r}): ask for more than 8 tokens' worth."
        )
    if was_truncated(long_answer) is not True:
        return False, (
            f"long_answer was cut (finish_reason {long_answer.finish_reason!r}), yet was_truncated(long_answer) gave "
            f"{was_truncated(long_answer)!r}: compare the reason with ==."
        )
    return (
        True,
        "finish_reason == 'length' is how you detect a truncated reply; the text cannot tell you.",
    )


# --- Exercise 4 (00.4): the stop rule, the third part of every loop. ---------------------------------


def _stop_truth(
    approved: bool, rounds: int, tokens: int, max_rounds: int, budget: int
) -> str | None:
    """The statement's rule, written once: acceptance first, then the token budget, then the rounds."""
    if approved:
        return "accepted"
    if tokens >= budget:
        return "token_budget"
    if rounds >= max_rounds:
        return "max_iterations"
    return None


STOP = Values(
    "stop",
    [
        Case((approved, rounds, tokens, max_rounds, budget))
        for approved in (False, True)
        for max_rounds in (1, 3, 6)
        for rounds in range(0, max_rounds + 4)
        for budget in (500, 2000, 7777)
        for tokens in (0, budget - 1, budget, budget + 300, 3 * budget)
    ]
    + [  # a budget or a round cap of 0 is reached at once
        Case((False, 1, 0, 3, 0)),
        Case((False, 1, 50, 3, 0)),
        Case((False, 0, 10, 0, 500)),
        Case((False, 2, 10, 0, 500)),
    ],
    oracle=_stop_truth,
    misreadings=[
        Misreading(
            lambda a, r, t, m, b: "token_budget" if t >= b else _stop_truth(a, r, t, m, b),
            "Acceptance comes first: an approved draft is accepted, whatever it cost.",
        ),
        Misreading(
            lambda a, r, t, m, b: (
                "max_iterations" if not a and r >= m else _stop_truth(a, r, t, m, b)
            ),
            "The budget comes before the round cap.",
        ),
        Misreading(
            lambda a, r, t, m, b: _stop_truth(a, r, t, m, b + 1),
            "A budget that is reached (tokens == budget) already stops.",
        ),
        Misreading(
            lambda a, r, t, m, b: _stop_truth(a, r, t, m + 1, b),
            "A round cap that is reached (rounds == max_rounds) already stops.",
        ),
    ],
)


stop_rule = STOP.exercise(
    "00.4",
    "stop_rule",
    hints=(
        "three reasons, checked in the order the statement gives them; a budget or a round cap that is reached "
        "(equal) already stops.",
        "if approved: 'accepted'; elif tokens >= budget: 'token_budget'; elif rounds >= max_rounds: "
        "'max_iterations'; else None.",
    ),
    passed=f"Your stop rule agrees with the statement on all {len(STOP.cases)} cases of the grid.",
)
