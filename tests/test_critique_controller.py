"""The JSON critic's parser and the iteration controller, on fakes (malformed JSON,
out-of-range scores, empty issues, oscillating scores)."""

import json

import pytest

from reflect.judging.calibration import replay_rule
from reflect.judging.controller import Draft, StopRule, best_so_far, drafts_of
from reflect.judging.critique import Critique, ParseFailure, critique_schema, parse_critique
from reflect.records import Step, Stop, Verdict

GOOD = {
    "score": 7,
    "issues": ["no docstring"],
    "strengths": ["correct"],
    "suggestion": "add a docstring",
}


def test_valid_critique():
    c = parse_critique(json.dumps(GOOD))
    assert isinstance(c, Critique) and c.score == 7 and c.suggestion == "add a docstring"


def test_json_inside_prose_or_fence():
    c = parse_critique("Here is my review:\n```json\n" + json.dumps(GOOD) + "\n```")
    assert isinstance(c, Critique) and c.issues == ["no docstring"]


def test_empty_issues_are_valid():
    assert parse_critique(json.dumps(GOOD | {"issues": []})).issues == []


@pytest.mark.parametrize(
    "text,needle",
    [
        ("", "empty"),
        ("The code looks fine, 8/10.", "no JSON object"),
        ('{"score": 7, "issues": [}', "invalid JSON"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps(GOOD | {"score": 0}), "score: Input should be greater than or equal to 1"),
        (json.dumps(GOOD | {"score": 11}), "score: Input should be less than or equal to 10"),
        (json.dumps(GOOD | {"score": "high"}), "score"),
        (
            json.dumps({k: v for k, v in GOOD.items() if k != "suggestion"}),
            "suggestion: Field required",
        ),
    ],
)
def test_malformed_replies_become_parse_failures(text, needle):
    res = parse_critique(text)
    assert isinstance(res, ParseFailure) and needle in res.error


def test_schema_matches_the_model():
    schema = critique_schema()
    assert set(schema["required"]) == {"score", "issues", "strengths", "suggestion"}
    assert schema["properties"]["score"]["minimum"] == 1


def h(*scores, outputs=None):
    outputs = outputs or [f"def f():\n    return {i}\n" for i in range(len(scores))]
    return [Draft(i + 1, o, s) for i, (s, o) in enumerate(zip(scores, outputs, strict=True))]


@pytest.mark.parametrize(
    "scores,reason",
    [
        ((9,), Stop.ACCEPTED),
        ((5,), None),
        ((5, 6), None),
        ((5, 6, 7), Stop.MAX_ITERATIONS),
        ((8, 6), Stop.REGRESSED),
        ((7, 5), Stop.REGRESSED),
        ((6, 6, 6), Stop.CONVERGED),
    ],
)
def test_stop_reasons(scores, reason):
    assert StopRule(threshold=8, max_iterations=3).decide_drafts(h(*scores)) == reason


def test_threshold_checked_on_the_last_attempt_only():
    assert StopRule(threshold=8).decide_drafts(h(9, 5)) == Stop.REGRESSED


def test_oscillating_scores():
    rule = StopRule(threshold=10, max_iterations=10, patience=10)
    assert rule.decide_drafts(h(4, 7, 4, 7)) == Stop.OSCILLATING
    assert rule.decide_drafts(h(4, 5, 6, 7)) is None


def test_draft_returning_to_an_earlier_one():
    a, b = "def f():\n    return 1\n", "def f():\n    return 2\n"
    assert (
        StopRule(threshold=10, max_iterations=10, patience=10).decide_drafts(
            h(4, 5, 6, outputs=[a, b, a + "\n"])
        )
        == Stop.OSCILLATING
    )


def test_unusable_critic_replies_never_stop_the_loop_forever():
    rule = StopRule(threshold=8, max_iterations=3)
    assert rule.decide_drafts(h(None, None)) is None
    assert (
        rule.decide_drafts(h(None, None, None)) == Stop.INVALID_CRITIC
    )  # the budget ran out with no usable critique


def test_best_so_far_not_last():
    hist = h(5, 8, 6)
    assert best_so_far(hist).iteration == 2
    assert best_so_far(h(7, 7)).iteration == 1
    assert best_so_far(h(None, None)).iteration == 2
    assert best_so_far([]) is None


@pytest.mark.parametrize(
    "text",
    [
        'It returns a dict like {"a": 1} for one word. Review: ' + json.dumps(GOOD),
        "Returns {'a': 1} for 'a'.\n```json\n" + json.dumps(GOOD) + "\n```\nThanks {for reading}.",
        json.dumps(GOOD) + "\n" + json.dumps(GOOD | {"score": 2}),
        'Mentions {"score": 99} in prose, then ' + json.dumps(GOOD),
    ],
)
def test_the_first_valid_critique_is_read_whatever_surrounds_it(text):
    c = parse_critique(text)
    assert isinstance(c, Critique) and c.score == 7 and c.suggestion == "add a docstring"


def test_a_critique_cut_off_midway_is_a_parse_failure_naming_no_object():
    res = parse_critique('```json\n{\n  "score": 10,\n  "issues": [],\n  "strengths": [')
    assert isinstance(res, ParseFailure) and res.error == "no JSON object in the critic reply"


def test_swinging_scores_stop_a_loop_with_the_default_rule_settings():
    # Under threshold 8 and a 20% regression bound, the scores a loop can see before stopping
    # stay within about 1.6 points: the swing rule must fire there, not only in a unit test.
    history, reason = replay_rule(h(6, 7, 6, 7), StopRule(threshold=8, max_iterations=5))
    assert (len(history), reason) == (4, Stop.OSCILLATING)
    assert (
        replay_rule(h(6, 6.5, 6, 6.5), StopRule(threshold=8, max_iterations=5))[1] == Stop.CONVERGED
    )


# ---- one rule over a run's steps: the drafts read off the steps, who accepts, what an unusable verdict counts as ----


def draft(code, tokens=10):
    return Step(0, "generator", "model", reply=code, prompt_tokens=tokens, code=code)


def judged(label, accepted=None, score=None, kind="model", reply="", tokens=0):
    return Step(
        0, "judge", kind, reply=reply, prompt_tokens=tokens, verdict=Verdict(label, accepted, score)
    )


def test_drafts_are_read_off_the_steps_with_their_last_verdict_and_tokens():
    steps = [
        Step(
            0, "test_writer", "model", prompt_tokens=99, note="3 asserts"
        ),  # before any draft: no draft's cost
        draft("a", 10),
        judged("score 4", None, 4, reply="fix the loop", tokens=5),
        Step(
            0, "reflector", "model", prompt_tokens=7
        ),  # after a draft's verdict: still that draft's cost
        Step(0, "given", "input", code="b"),
        judged("score 9", None, 9),
    ]
    got = drafts_of(steps)
    assert [(d.iteration, d.code, d.score, d.feedback, d.tokens, d.accepted) for d in got] == [
        (1, "a", 4, "fix the loop", 22, None),
        (2, "b", 9, "", 0, None),
    ]
    assert StopRule(threshold=8).decide(steps) is Stop.ACCEPTED
    assert StopRule(threshold=10, max_iterations=5).decide(steps) is None


def test_a_judge_that_decides_itself_is_read_by_its_last_verdict_and_every_check():
    rule = StopRule(
        threshold=1.0, max_iterations=5, accept_by="judge", unscored=0.0, oscillation_window=0
    )
    passing_tests = judged("3/3 passed", True, kind="check")
    voters = [
        judged("fail, score 0.2", False, 0.2),
        judged("vote: pass", True, 0.7),
    ]  # the vote, last, decides
    assert rule.decide([draft("a"), passing_tests, *voters]) is Stop.ACCEPTED
    assert (
        rule.decide([draft("a"), judged("1/3 passed", False, kind="check"), voters[-1]]) is None
    )  # a failed check
    assert rule.decide([draft("a"), passing_tests, judged("pass, score 0.4", False, 0.4)]) is None
    # a score that reaches the threshold accepts nothing when the judge decides
    assert rule.decide([draft("a"), passing_tests, judged("fail, score 1", False, 1.0)]) is None
    # a reviewer gives no score: its rule runs out of iterations, it does not stop on an invalid critic
    assert (
        StopRule(max_iterations=1, accept_by="judge").decide(
            [draft("a"), judged("not approved", False)]
        )
        is Stop.MAX_ITERATIONS
    )


def test_an_unusable_verdict_counts_as_the_rules_unscored_score():
    steps = [
        draft("a"),
        judged("fail, score 0.6", False, 0.6),
        draft("b"),
        judged("unusable", False, None),
    ]
    assert StopRule(threshold=1.0, accept_by="judge", unscored=0.0).decide(steps) is Stop.REGRESSED
    assert (
        StopRule(threshold=1.0, accept_by="judge").decide(steps) is None
    )  # no score: nothing to compare


def test_the_rule_chooses_the_accepted_draft_else_the_best():
    rule = StopRule(threshold=8, max_iterations=5)
    assert rule.choose(h(5, 9), Stop.ACCEPTED).iteration == 2
    # a judge accepted the last draft though an earlier one scored higher: the accepted one is returned
    assert rule.choose(h(9, 7), Stop.ACCEPTED).iteration == 2
    assert rule.choose(h(7, 4), Stop.REGRESSED).iteration == 1
    assert (
        rule.choose(h(None, None), Stop.MAX_ITERATIONS).iteration == 2
        and rule.choose([], None) is None
    )
