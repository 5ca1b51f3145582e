"""maker_checker with scripted fake agents: every way a loop can end, and the shared thread."""

import pytest

from reflect.judging.sentinel import starts_with_sentinel, verdict_for
from reflect.model.llm import ModelError
from reflect.records import Stop
from reflect.strategies.maker_checker import keep_last, maker_checker
from reflect.tasks.prompts import GENERATOR_PROMPT, REVIEWER_PROMPT
from reflect.testing import FakeReply, ScriptedChat

DRAFT = "```python\ndef f(x):\n    return x\n```"


def R(text, prompt_tokens=10, completion_tokens=5):
    return FakeReply(text, prompt_tokens, completion_tokens)


class Script(ScriptedChat):
    """Generator and reviewer scripts; every reply costs 10 + 5 tokens unless given."""

    def __init__(self, generator, reviewer):
        def wrap(items):
            return [i if isinstance(i, (FakeReply, BaseException)) else R(i) for i in items]

        super().__init__({"generator": wrap(generator), "reviewer": wrap(reviewer)})

    @property
    def seen(self):
        return self.calls


def test_approved_on_first_review():
    s = Script([DRAFT], ["APPROVED"])
    res = maker_checker(s, "write f", task_id="f")
    assert (res.stop, len(res.drafts), res.strategy, res.task_id) == (
        Stop.ACCEPTED,
        1,
        "maker-checker",
        "f",
    )
    assert res.final_code == "def f(x):\n    return x\n"
    assert [m["content"][:12] for m in s.seen[-1].messages[1:]] == ["write f", "[Generator]:"]
    assert [(st.role, st.verdict and st.verdict.label) for st in res.steps] == [
        ("generator", None),
        ("reviewer", "approved"),
    ]


def test_perspective_own_shows_each_role_its_turns_as_assistant_and_the_others_as_user():
    s = Script([DRAFT, DRAFT], ["Handle negatives.", "APPROVED"])
    res = maker_checker(s, "write f", perspective="own")
    review1, gen2 = s.seen[1].messages[1:], s.seen[2].messages[1:]
    assert review1 == [
        {"role": "user", "content": f"write f\n\n{DRAFT}"}
    ]  # the draft is the other role's
    assert gen2 == [
        {"role": "user", "content": "write f"},
        {"role": "assistant", "content": DRAFT},
        {"role": "user", "content": "Handle negatives."},
    ]
    assert s.seen[3].messages[1:] == [
        {"role": "user", "content": f"write f\n\n{DRAFT}"},
        {"role": "assistant", "content": "Handle negatives."},
        {"role": "user", "content": DRAFT},
    ]
    assert (
        res.steps[1].request == f"write f\n\n{DRAFT}"
    )  # each step records the last message it was sent


def test_perspective_shared_is_the_textbook_thread_and_a_wrong_name_is_refused():
    s = Script([DRAFT, DRAFT], ["Handle negatives.", "APPROVED"])
    maker_checker(s, "write f")
    assert [m["role"] for m in s.seen[2].messages[1:]] == ["user", "assistant", "assistant"]
    assert s.seen[2].messages[-1]["content"] == "[Reviewer]: Handle negatives."
    with pytest.raises(ValueError, match="perspective"):
        maker_checker(s, "write f", perspective="mine")


def test_each_agent_sees_its_own_system_prompt_and_the_shared_thread():
    s = Script([DRAFT, DRAFT], ["Handle negatives.", "APPROVED"])
    maker_checker(s, "write f")
    roles = [c.role for c in s.seen]
    assert roles == ["generator", "reviewer", "generator", "reviewer"]
    assert s.seen[0].messages[0] == {"role": "system", "content": GENERATOR_PROMPT}
    assert s.seen[1].messages[0] == {"role": "system", "content": REVIEWER_PROMPT}
    third = s.seen[2].messages
    assert [m["role"] for m in third] == ["system", "user", "assistant", "assistant"]
    assert third[-1]["content"] == "[Reviewer]: Handle negatives."


def test_approved_after_revisions_keeps_history():
    s = Script([DRAFT, DRAFT.replace("return x", "return abs(x)")], ["Use abs.", "APPROVED\nGood."])
    res = maker_checker(s, "write f")
    assert res.stop is Stop.ACCEPTED and len(res.drafts) == 2
    assert "abs" in res.final_code and "abs" in res.drafts[1]
    assert [t.verdict.accepted for t in res.judgements] == [False, True]
    assert res.tokens == 4 * 15


def test_never_approved_stops_at_max_iterations_with_last_version():
    s = Script([DRAFT.replace("x\n", f"x + {i}\n") for i in range(4)], ["Fix it."] * 4)
    res = maker_checker(s, "write f", max_iterations=4)
    assert (res.stop, len(res.drafts)) == (Stop.MAX_ITERATIONS, 4)
    assert (
        "x + 3" in res.final_code
        and res.chosen == "the last draft (maker-checker keeps the last version)"
    )
    assert (
        len(res.steps) == 2 * 4 and len(s.seen[-1].messages) == 1 + 1 + 2 * 4 - 1
    )  # system, task, 7 turns


@pytest.mark.parametrize("review", ["", "   ", "\x00\x01garbled###", "**APPROVED** but no"])
def test_empty_or_garbled_review_is_not_approval(review):
    s = Script([DRAFT] * 2, [review, "APPROVED"])
    res = maker_checker(s, "write f", max_iterations=2)
    assert res.judgements[0].verdict.accepted is False
    assert res.stop is Stop.ACCEPTED and len(res.drafts) == 2
    if not review.strip():
        assert res.judgements[0].note == "empty review"


def test_provider_error_mid_loop_ends_cleanly_and_keeps_the_draft():
    s = Script([DRAFT, ModelError("server down")], ["Fix it."])
    res = maker_checker(s, "write f")
    assert res.stop is Stop.PROVIDER_ERROR
    assert "server down" in res.error and res.final_code.startswith("def f")
    assert len(res.steps) == 2


def test_reviewer_error_is_reported_as_such():
    res = maker_checker(Script([DRAFT], [ModelError("429")]), "write f")
    assert res.stop is Stop.PROVIDER_ERROR and res.error.startswith("reviewer call failed")
    assert res.final_code.startswith("def f") and len(res.drafts) == 1


def test_prose_only_draft_keeps_previous_code_and_notes_it():
    s = Script([DRAFT, "I would rather explain."], ["Fix.", "APPROVED"])
    res = maker_checker(s, "write f")
    assert res.final_code.startswith("def f") and res.steps[2].note.startswith(
        "The reply has no Python code"
    )


def test_token_budget_stops_before_a_call_that_would_pass_it():
    # each draft costs 150 tokens, each review 110: after one round (260) a second draft would
    # make 410, past 300, so it is never asked for
    s = Script([R(DRAFT, 100, 50)] * 4, [R("Fix.", 100, 10)] * 4)
    res = maker_checker(s, "write f", token_budget=300)
    assert res.stop is Stop.TOKEN_BUDGET
    assert [st.role for st in res.steps] == ["generator", "reviewer"] and res.tokens == 260
    # with 600, a second round fits (520) and a third draft (670) would not
    s = Script([R(DRAFT, 100, 50)] * 4, [R("Fix.", 100, 10)] * 4)
    res = maker_checker(s, "write f", token_budget=600)
    assert res.stop is Stop.TOKEN_BUDGET and len(res.steps) == 4 and res.tokens == 520
    # a review that would pass it is not asked for either: the draft stands unreviewed
    s = Script([R(DRAFT, 100, 50)] * 4, [R("Fix.", 300, 10)] * 4)
    res = maker_checker(s, "write f", token_budget=700)
    assert [st.role for st in res.steps] == ["generator", "reviewer", "generator"]
    assert res.stop is Stop.TOKEN_BUDGET and res.tokens == 610
    with pytest.raises(ValueError, match="token_budget"):
        maker_checker(Script([], []), "write f", token_budget=0)


def test_blank_task_is_a_clear_error():
    with pytest.raises(ValueError, match="The task is blank"):
        maker_checker(Script([], []), "   ")
    with pytest.raises(ValueError, match="max_iterations"):
        maker_checker(Script([], []), "x", max_iterations=0)


def test_other_sentinel_and_reading():
    s = Script([DRAFT], ["CODE_IS_PERFECT"])
    assert maker_checker(s, "x", is_approved=verdict_for("CODE_IS_PERFECT")).stop is Stop.ACCEPTED
    s = Script([DRAFT], ["APPROVED? Not yet."])
    assert (
        maker_checker(s, "x", is_approved=starts_with_sentinel, max_iterations=1).stop
        is Stop.ACCEPTED
    )  # the pitfall


def test_trimmed_thread_sends_less_but_keeps_everything():
    s = Script([DRAFT] * 3, ["Fix a.", "Fix b.", "APPROVED"])
    res = maker_checker(s, "write f", trim=keep_last(2))
    last_generator = [c.messages for c in s.seen if c.role == "generator"][-1]
    assert len(last_generator) == 1 + 1 + 2  # system, task, last two messages
    assert (
        len(res.steps) == 6 and res.stop is Stop.ACCEPTED
    )  # every turn is kept, whatever was sent
    with pytest.raises(ValueError):
        keep_last(0)


def test_judge_the_judge_pairs_each_verdict_with_the_tests():
    from reflect.judging.hidden import judge_the_judge
    from reflect.tasks.task import get_task
    from tests.reference_solutions import CORRECT, FLAWED

    wrong = f"```python\n{FLAWED['count_vowels']}```"
    right = f"```python\n{CORRECT['count_vowels']}```"
    s = Script([wrong, right], ["APPROVED? no", "Not needed but fine"])
    res = maker_checker(s, "count vowels", max_iterations=2)
    assert judge_the_judge(get_task("count_vowels"), res) == [(1, False, False), (2, False, True)]


def test_scripted_chat_counts_words_and_runs_out_loudly():
    chat = ScriptedChat({"critic": ["looks good"]})
    r = chat([{"role": "user", "content": "three words here"}], role="critic")
    assert (r.text, r.prompt_tokens, r.completion_tokens) == ("looks good", 3, 2)
    with pytest.raises(IndexError, match="no more replies for role 'critic'"):
        chat([], role="critic")


def test_an_approval_stands_when_its_review_passed_the_budget_and_a_rejection_stops_there():
    approved = maker_checker(
        Script([R(DRAFT, 100, 50)], [R("APPROVED", 200, 10)]), "write f", token_budget=300
    )
    assert approved.stop is Stop.ACCEPTED
    rejected = maker_checker(
        Script([R(DRAFT, 100, 50)] * 2, [R("Fix.", 200, 10)] * 2), "write f", token_budget=300
    )
    assert rejected.stop is Stop.TOKEN_BUDGET and len(rejected.steps) == 2
