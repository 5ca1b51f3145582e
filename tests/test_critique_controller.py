"""The JSON critic's parser and the iteration controller, on fakes (malformed JSON,
out-of-range scores, empty issues, oscillating scores)."""

import json

import pytest

from reflect.judging.calibration import replay_rule
from reflect.judging.controller import ScoredAttempt, StopRule, analyze_improvement, best_so_far
from reflect.judging.critique import Critique, ParseFailure, critique_schema, parse_critique

GOOD = {"score": 7, "issues": ["no docstring"], "strengths": ["correct"], "suggestion": "add a docstring"}


def test_valid_critique():
    c = parse_critique(json.dumps(GOOD))
    assert isinstance(c, Critique) and c.score == 7 and c.suggestion == "add a docstring"


def test_json_inside_prose_or_fence():
    c = parse_critique("Here is my review:\n```json\n" + json.dumps(GOOD) + "\n```")
    assert isinstance(c, Critique) and c.issues == ["no docstring"]


def test_empty_issues_are_valid():
    assert parse_critique(json.dumps(GOOD | {"issues": []})).issues == []


@pytest.mark.parametrize("text,needle", [
    ("", "empty"),
    ("The code looks fine, 8/10.", "no JSON object"),
    ('{"score": 7, "issues": [}', "invalid JSON"),
    ("[1, 2]", "expected a JSON object"),
    (json.dumps(GOOD | {"score": 0}), "score: Input should be greater than or equal to 1"),
    (json.dumps(GOOD | {"score": 11}), "score: Input should be less than or equal to 10"),
    (json.dumps(GOOD | {"score": "high"}), "score"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "suggestion"}), "suggestion: Field required"),
])
def test_malformed_replies_become_parse_failures(text, needle):
    res = parse_critique(text)
    assert isinstance(res, ParseFailure) and needle in res.error


def test_schema_matches_the_model():
    schema = critique_schema()
    assert set(schema["required"]) == {"score", "issues", "strengths", "suggestion"}
    assert schema["properties"]["score"]["minimum"] == 1


def h(*scores, outputs=None):
    outputs = outputs or [f"def f():\n    return {i}\n" for i in range(len(scores))]
    return [ScoredAttempt(i + 1, o, s, "") for i, (s, o) in enumerate(zip(scores, outputs, strict=True))]


@pytest.mark.parametrize("scores,reason", [
    ((9,), "threshold"),
    ((5,), None),
    ((5, 6), None),
    ((5, 6, 7), "max_iterations"),
    ((8, 6), "regression"),
    ((7, 5), "regression"),
    ((6, 6, 6), "converged"),
])
def test_stop_reasons(scores, reason):
    assert StopRule(threshold=8, max_iterations=3).decide(h(*scores)) == reason


def test_threshold_checked_on_the_last_attempt_only():
    assert StopRule(threshold=8).decide(h(9, 5)) == "regression"


def test_oscillating_scores():
    rule = StopRule(threshold=10, max_iterations=10, patience=10)
    assert rule.decide(h(4, 7, 4, 7)) == "oscillation"
    assert rule.decide(h(4, 5, 6, 7)) is None


def test_draft_returning_to_an_earlier_one():
    a, b = "def f():\n    return 1\n", "def f():\n    return 2\n"
    assert StopRule(threshold=10, max_iterations=10, patience=10).decide(h(4, 5, 6, outputs=[a, b, a + "\n"])) == "oscillation"


def test_unusable_critic_replies_never_stop_the_loop_forever():
    rule = StopRule(threshold=8, max_iterations=3)
    assert rule.decide(h(None, None)) is None
    assert rule.decide(h(None, None, None)) == "max_iterations"


def test_best_so_far_not_last():
    hist = h(5, 8, 6)
    assert best_so_far(hist).iteration == 2
    assert best_so_far(h(7, 7)).iteration == 1
    assert best_so_far(h(None, None)).iteration == 2
    assert best_so_far([]) is None


def test_analyze_improvement():
    assert analyze_improvement(h(4, None, 7)) == {
        "initial": 4, "final": 7, "best": 7, "improvement": 3, "iterations": 3, "progression": [4, None, 7]}
    assert analyze_improvement(h(None))["improvement"] is None


@pytest.mark.parametrize("text", [
    'It returns a dict like {"a": 1} for one word. Review: ' + json.dumps(GOOD),
    "Returns {'a': 1} for 'a'.\n```json\n" + json.dumps(GOOD) + "\n```\nThanks {for reading}.",
    json.dumps(GOOD) + "\n" + json.dumps(GOOD | {"score": 2}),
    'Mentions {"score": 99} in prose, then ' + json.dumps(GOOD),
])
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
    assert (len(history), reason) == (4, "oscillation")
    assert replay_rule(h(6, 6.5, 6, 6.5), StopRule(threshold=8, max_iterations=5))[1] == "converged"
