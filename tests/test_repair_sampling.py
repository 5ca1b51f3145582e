"""Lesson 06's feedback experiment on a scripted model: blind-sample, repair-sample and
repair-edit-sample (course_bench.catalog) differ only in what a sample after the first draft
sees. They stop on passing evidence, choose by it (the earliest on a tie), count every call's tokens,
and no old code, and no hidden test, reaches a prompt that should not carry it."""

from __future__ import annotations

import pytest

from course_bench.catalog import catalog
from reflect.judging.hidden import hidden_lines_in_prompts
from reflect.records import Stop
from reflect.strategies.resample import Resample
from reflect.tasks.prompts import repair_request
from reflect.tasks.task import get_task
from reflect.testing import ScriptedChat

HE0 = get_task("HumanEval/0")  # its statement shows two examples: the evidence, no test writer
FACT = get_task("factorial")  # no examples: the agent writes its own tests
GOOD = (
    "```python\ndef has_close_elements(numbers, threshold):\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n```"
)
NEVER = "```python\ndef has_close_elements(numbers, threshold):\n    return False\n```"  # passes the first example only
ALWAYS = "```python\ndef has_close_elements(numbers, threshold):\n    return True\n```"  # passes the second only
BROKEN = "```python\ndef has_close_elements(numbers, threshold):\n    return numbers[99]\n```"  # passes neither
ARMS = ("blind-sample", "repair-sample", "repair-edit-sample")


def arm(name: str, k: int = 6) -> Resample:
    return catalog(k=k)[name]()


def body(reply: str) -> str:
    return reply.split("```python\n")[1].split("```")[0]


@pytest.mark.parametrize("name", ARMS)
def test_each_arm_shows_a_sample_exactly_what_its_feedback_says(name):
    chat = ScriptedChat({"generator": [NEVER, BROKEN, GOOD]})
    run = arm(name).run(HE0, chat)
    first, *samples = [c for c in chat.calls if c.role == "generator"]
    assert first.params == {"temperature": 0.0, "max_tokens": 512, "seed": 42}  # one-shot's request
    assert [c.params for c in samples] == [
        {"temperature": 0.6, "seed": 43},
        {"temperature": 0.6, "seed": 44},
    ]
    failed = (
        "assert has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3) == True # output: False"
    )
    for c in samples:
        sent = c.messages[-1]["content"]
        assert sent.startswith(HE0.prompt())
        assert (failed in sent) == (
            name != "blind-sample"
        )  # the failed check with what the draft returned
        assert (body(NEVER) in sent) == (
            name == "repair-edit-sample"
        )  # the old code: only where it should be
        assert (
            body(BROKEN) not in sent
        )  # every sample repairs the first draft, never a later sample
    assert run.stop is Stop.ACCEPTED and run.passed and run.chosen.startswith("draft 3: 2/2")


@pytest.mark.parametrize("code", [None, "def f():\n    return 1\n"])
def test_a_repair_request_with_no_failed_check_is_refused(code):
    """Lesson 03's fresh attempt once sent "failed these checks:" over "All 2 visible checks passed.": the
    builder of the repair prompts refuses to write such a prompt."""
    assert "failed these checks" in repair_request(HE0, [("assert f() == 2", "1")], code)
    with pytest.raises(ValueError, match="at least one failed check"):
        repair_request(HE0, [], code)


@pytest.mark.parametrize("name", ARMS)
def test_a_first_draft_that_passes_its_evidence_is_the_only_call(name):
    chat = ScriptedChat({"generator": [GOOD, NEVER]})
    run = arm(name).run(HE0, chat)
    assert (
        [c.role for c in chat.calls] == ["generator"]
        and run.stop is Stop.ACCEPTED
        and run.chosen.startswith("draft 1")
    )


def test_without_a_pass_the_draft_with_the_most_checks_passed_wins_the_earliest_on_a_tie():
    chat = ScriptedChat({"generator": [BROKEN, ALWAYS, NEVER]})
    run = arm("repair-sample", k=3).run(HE0, chat)
    assert (
        run.stop is Stop.MAX_ITERATIONS
        and run.chosen.startswith("draft 2: 1/2")
        and body(ALWAYS) == run.final_code
    )
    assert len([c for c in chat.calls if c.role == "generator"]) == 3


def test_tokens_add_up_over_every_call_the_test_writer_included():
    own = "```python\nassert calculate_factorial(0) == 1\nassert calculate_factorial(3) == 6\n```"
    wrong = "```python\ndef calculate_factorial(n):\n    return 1\n```"
    right = "```python\ndef calculate_factorial(n):\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n```"
    chat = ScriptedChat({"test_writer": [own], "generator": [wrong, wrong, right]})
    run = arm("repair-edit-sample").run(
        FACT, chat
    )  # no examples in the statement: its own tests are the evidence
    assert [c.role for c in chat.calls] == ["test_writer", "generator", "generator", "generator"]
    spent = sum(
        len(str(m["content"]).split()) for c in chat.calls for m in c.messages
    )  # ScriptedChat's prompt tokens
    spent += sum(len(r.split()) for r in (own, wrong, wrong, right))
    assert (
        run.tokens == spent
        and run.calls == 4
        and run.tokens_by_role.keys() == {"test_writer", "generator"}
    )
    assert (
        "# output: 1" in chat.calls[2].messages[-1]["content"]
    )  # calculate_factorial(3) returned 1


@pytest.mark.parametrize("name", ARMS)
def test_no_hidden_test_reaches_any_prompt(name):
    chat = ScriptedChat({"generator": [NEVER, ALWAYS, BROKEN, NEVER, ALWAYS, BROKEN]})
    run = arm(name).run(HE0, chat)
    assert (
        hidden_lines_in_prompts(
            HE0,
            [m["content"] for c in chat.calls for m in c.messages],
            [s.reply for s in run.steps],
        )
        == []
    )


def test_feedback_needs_evidence_and_a_stop_on_pass():
    with pytest.raises(ValueError, match="feedback needs evidence"):
        Resample(feedback="failure", select="first", stop_on_pass=True)
    with pytest.raises(ValueError, match="feedback needs evidence"):
        Resample(feedback="failure")
    with pytest.raises(ValueError, match="feedback must be one of"):
        Resample(feedback="hidden", stop_on_pass=True)


def _rows(name: str, run, hidden: dict[int, bool]) -> dict:
    return {
        "strategy": name,
        "task_id": run.task_id,
        "config": {},
        "run": run.to_dict(),
        "drafts": {str(i): v for i, v in hidden.items()},
        "leaks": [],
    }


def test_the_report_counts_samples_that_give_the_first_draft_back():
    from reflect.evaluation import report

    chat = ScriptedChat(
        {"generator": [NEVER, NEVER, "```python\n" + body(NEVER) + "\n\n```", GOOD]}
    )
    run = arm("repair-edit-sample").run(HE0, chat)  # drafts at steps 0, 2, 4, 6; tests after each
    row = _rows("repair-edit-sample", run, {0: False, 2: False, 4: False, 6: True})
    assert report.repeats_of_first([row], "repair-edit-sample") == (2, 3)
