"""Lesson 01's stricter-prompt and draws checks read the sampling of the calls in the ledger: a retry sent
through conn.chat (the server's own temperature, no seed, no cap) fails, the same retry at the first
draft's sampling passes; draws whose calls were not made at temperature 0.8 with seeds 1, 2 and 3 fail."""

from __future__ import annotations

from types import SimpleNamespace

from course_checks import lesson01 as ex
from reflect.judging.hidden import Attempt
from reflect.model.accounting import CallRecord, Ledger
from reflect.model.roles import sampling
from reflect.records import Run, Step, Stop
from reflect.strategies.one_shot import one_shot
from reflect.tasks.task import get_task

PROMPT = ex.GENERATOR_PROMPT + " Check every requirement first."


def right_retry_failed(chat, attempts, prompt):
    return [
        one_shot(chat, get_task(a.task_id), system_prompt=prompt) for a in attempts if not a.passed
    ]


def evaluate(sampled: tuple) -> tuple:
    attempts = [
        Attempt("factorial", "easy", True, 8, 8, "", prompt_tokens=124, completion_tokens=120),
        Attempt("flatten", "medium", False, 2, 5, "x", prompt_tokens=130, completion_tokens=90),
        Attempt("caesar", "medium", False, 5, 6, "y", prompt_tokens=140, completion_tokens=80),
    ]
    retry = [
        Run(
            strategy="one-shot",
            task_id=tid,
            final_code="",
            stop=Stop.SINGLE_DRAFT,
            steps=(Step(0, "generator", "model", "", "", p, c),),
            passed=False,
        )
        for tid, p, c in (("flatten", 142, 95), ("caesar", 152, 70))
    ]
    records = [
        CallRecord(
            "generator", a.prompt_tokens, a.completion_tokens, 1.0, "local", "m", False, sampled
        )
        for a in attempts
    ] + [
        CallRecord("generator", p, c, 1.0, "local", "m", False, sampled)
        for p, c in ((142, 95), (152, 70))
    ]
    conn = SimpleNamespace(ledger=Ledger(records))
    return ex.stricter_prompt.evaluate(right_retry_failed, PROMPT, retry, attempts, conn)


def test_retries_at_the_first_drafts_sampling_pass():
    passed, message, *_ = evaluate(tuple(sorted(sampling("generator").items())))
    assert passed, message


def test_retries_sent_without_the_sampling_fail_and_say_so():
    passed, message, *_ = evaluate(())
    assert not passed and "without the first draft's sampling" in message
    passed, message, *_ = evaluate((("max_tokens", 512), ("temperature", 0.8)))
    assert not passed and "flatten" in message


def test_rates_by_level_is_a_function_and_a_typed_table_fails():
    """Build 4 grades a function on made-up attempts: the old dict answer is told to become a function, and a table
    typed in from section 2 fails on the made-up attempts."""
    from course_checks import lesson01 as ex
    from reflect.judging import pass_rate

    def right(attempts):
        return {
            lv: pass_rate([a for a in attempts if a.difficulty == lv])
            for lv in ("easy", "medium", "hard")
        }

    attempts = ex._attempts("eP ef mP hf")
    assert ex.per_level.check(right, attempts, right(attempts))[0]
    ok, message = ex.per_level.check(right, attempts, {"easy": 0.5, "medium": 1.0, "hard": 0})[:2]
    assert ok  # the same shares, an int 0 for 0.0
    ok, message = ex.per_level.check(
        right, ex._attempts("eP ef ef mP hf"), {"easy": 0.33, "medium": 1.0, "hard": 0.0}
    )[:2]
    assert not ok and "rate_by_level is" in message, (
        message
    )  # a seventh fresh read's: the rates typed in, rounded
    ok, message = ex.per_level.check({"easy": 0.5, "medium": 1.0, "hard": 0.0}, attempts)
    assert not ok and "not a function" in message
    ok, message = ex.per_level.check(
        lambda attempts: {"easy": 0.5, "medium": 1.0, "hard": 0.0}, attempts
    )
    assert not ok


def test_a_retry_that_empties_the_attempts_it_was_given_fails_and_says_so():
    def emptying(chat, attempts, prompt):
        failed = [a for a in attempts if not a.passed]
        for a in failed:
            attempts.remove(a)
        return right_retry_failed(chat, failed, prompt)

    passed, message, *_ = ex.stricter_prompt.evaluate(emptying, PROMPT, None, [], None)
    assert not passed and "changed the attempts it was given" in message


def draws_sampled(samplings: list[tuple]) -> tuple:
    """Exercise 7 graded on made-up draws of flatten whose calls the ledger holds at the given samplings."""
    attempts = [
        Attempt("factorial", "easy", True, 8, 8, "", prompt_tokens=124, completion_tokens=120),
        Attempt("flatten", "medium", False, 2, 5, "x", prompt_tokens=130, completion_tokens=90),
    ]
    tokens = ((130, 91), (130, 92), (130, 93))
    draws = [
        Run(
            strategy="one-shot",
            task_id="flatten",
            final_code="",
            stop=Stop.SINGLE_DRAFT,
            steps=(Step(0, "generator", "model", "", "", p, c),),
            passed=False,
        )
        for p, c in tokens
    ]
    records = [
        CallRecord("generator", a.prompt_tokens, a.completion_tokens, 1.0, "local", "m")
        for a in attempts
    ] + [
        CallRecord("generator", p, c, 1.0, "local", "m", False, s)
        for (p, c), s in zip(tokens, samplings, strict=True)
    ]
    conn = SimpleNamespace(ledger=Ledger(records))

    def sample_three(chat, task):
        return [
            one_shot(lambda m, s=s, **p: chat(m, **{**p, **ex.HOT, "seed": s}), task)
            for s in (1, 2, 3)
        ]

    return ex.pass_at_three.evaluate(
        sample_three,
        get_task("flatten"),
        draws,
        lambda runs: any(r.passed for r in runs),
        attempts,
        conn,
    )


def _hot(seed: int) -> tuple:
    return tuple(sorted({**ex.HOT, "seed": seed}.items()))


def test_draws_are_the_calls_made_at_seeds_1_2_3_and_temperature_0_8():
    """The draws' calls in the ledger carry the exercise's sampling: draws made at temperature 0, or at one seed
    three times, fail with the seed and draw named."""
    passed, message, *_ = draws_sampled([_hot(1), _hot(2), _hot(3)])
    assert passed, message
    cold = tuple(sorted(sampling("generator").items()))
    passed, message, *_ = draws_sampled([cold, cold, cold])
    assert not passed and "seed 1 made draw 1" in message
    passed, message, *_ = draws_sampled([_hot(1), _hot(1), _hot(1)])
    assert not passed and "seed 2 made draw 2" in message


def test_a_careful_prompt_that_never_names_the_requirements_or_is_a_task_fails():
    """The second fresh read's prompts: the course's prompt lower-cased, one without the requirements, and a task's
    own text as the system prompt each fail (the prompt's effect is live only; what it asks for is not)."""
    from reflect.tasks.task import get_task as task_of

    conn = SimpleNamespace(ledger=Ledger([]))
    for prompt, said in (
        (ex.GENERATOR_PROMPT.lower(), "never asks about the requirements"),
        ("You are a careful Python developer. Output ONLY the Python code.", "requirements"),
        (task_of("factorial").prompt(), "a task's own text"),
        (  # a third fresh read's: prose about each requirement, then the code
            "You are an expert Python developer. Go through every listed requirement one by one and explain in "
            "prose how your code meets each of them, then give the code.",
            "never asks for the code alone",
        ),
    ):
        passed, message, *_ = ex.stricter_prompt.evaluate(
            right_retry_failed, prompt, None, [], conn
        )
        assert not passed and said in message, message
    for prompt in (
        PROMPT,
        "Check your code against each listed requirement, then reply with nothing but the code.",
        "Go through every requirement first. Answer with code only.",
    ):
        assert "ready" in ex.stricter_prompt.evaluate(right_retry_failed, prompt, None, [], conn)[1]


def _verdict_of(error_first: bool):
    def verdict_of(task, code):
        if not code.strip():
            return (False, "no code in the reply", [])
        r = task.run(code)
        failed = r.failures[0].describe().removeprefix("FAIL ") if r.failures else ""
        first = (r.error or failed) if error_first else (failed or r.error or "")
        missed = [c.reason for c in task.static_checks(code) if not c.passed]
        return (r.passed, "" if r.passed else first, missed)

    return verdict_of


def test_a_verdict_that_reads_the_error_before_the_failed_test_is_named():
    """A third fresh read's: `result.error or failures[0]`. A draft whose process ends in a test has both."""
    assert ex.VERDICT.problem(_verdict_of(error_first=False)) is None
    assert "a failed test comes first" in ex.VERDICT.problem(_verdict_of(error_first=True))


def test_passes_any_that_judges_each_draws_code_again_passes():
    """A third fresh read's right answer judges the draws' code rather than reading .passed: the made-up draws'
    code is what their verdicts say."""
    from reflect.judging.hidden import judge

    def by_judging(draws):
        return any(judge(get_task(d.task_id), d.final_code).passed for d in draws)

    assert ex.PASSES_ANY.problem(by_judging) is None
    assert ex.PASSES_ANY.problem(lambda draws: bool(draws)) is not None


def test_the_sixth_fresh_reads_wrong_answers_of_lesson_01_fail():
    """From a sixth fresh read of lesson 01 (/tmp/fresh01f): a verdict that strips every "FAIL" from the first
    failure (a failing call's value may say FAIL), and a retry_failed that retries a task once however often its
    attempts failed."""

    def verdict_of(task, code):
        if not code.strip():
            return False, "no code in the reply", []
        result = task.run(code)
        first = (
            result.failures[0].describe().replace("FAIL", "").strip()
            if result.failures
            else result.error or ""
        )
        missed = [check.reason for check in task.static_checks(code) if not check.passed]
        return result.passed, "" if result.passed else first, missed

    problem = ex.VERDICT.problem(verdict_of)
    assert problem and "{'FAIL': 1}" in problem, problem

    def once_a_task(chat, attempts, prompt):
        seen, out = set(), []
        for a in attempts:
            if not a.passed and a.task_id not in seen:
                seen.add(a.task_id)
                out.append(one_shot(chat, get_task(a.task_id), system_prompt=prompt))
        return out

    assert ex.RETRY.problem(right_retry_failed) is None
    assert "of ['flatten', 'flatten'] (one per failed attempt, in order)" in ex.RETRY.problem(
        once_a_task
    )


def test_retry_failed_is_graded_on_the_runs_it_returns_as_well_as_its_requests():
    """The right calls, then the attempts it was given (or its runs reversed) returned: not the new runs."""

    def returns_the_attempts(chat, attempts, prompt):
        right_retry_failed(chat, attempts, prompt)
        return [a for a in attempts if not a.passed]

    def reversed_runs(chat, attempts, prompt):
        return right_retry_failed(chat, attempts, prompt)[::-1]

    assert "return the list of the runs one_shot made" in ex.RETRY.problem(returns_the_attempts)
    assert "expected the new runs its calls made" in ex.RETRY.problem(reversed_runs)


def test_retry_failed_may_not_change_the_attempts_it_is_given():
    def clears(chat, attempts, prompt):
        runs = right_retry_failed(chat, attempts, prompt)
        attempts.clear()
        return runs

    assert "retry_failed changed the attempts it was given" in ex.RETRY.problem(clears)


def test_the_eighth_fresh_reads_wrong_answers_of_lesson_01_fail():
    """01.2: 'FAIL ' stripped as a set of letters (lstrip) eats a call that starts with one of them; 01.8: a pick
    that skips empty drafts loses the earliest of a tie, and returns None when every draft is empty."""
    from course_checks import lesson01 as ex
    from reflect.judging.critics import TestGroundedCritic

    def verdict_of(task, code):
        if not code.strip():
            return False, "no code in the reply", []
        result = task.run(code)
        first = "" if result.passed else (result.failures[0].describe().lstrip("FAIL ") if result.failures
                                          else result.error or "")  # fmt: skip
        return result.passed, first, [c.reason for c in task.static_checks(code) if not c.passed]

    problem = ex.VERDICT.problem(verdict_of)
    assert problem and "starts with an A" in problem, problem

    def pick(task, drafts):
        best = best_score = None
        for d in drafts:
            if d.final_code.strip():
                score = TestGroundedCritic().evaluate(task, d.final_code).score
                if best is None or score > best_score:
                    best, best_score = d, score
        return best

    assert ex.PICK.problem(pick) is not None
