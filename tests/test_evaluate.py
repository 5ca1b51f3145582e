from dataclasses import dataclass

import pytest

from reflect.evaluation.results import load_attempts, save_attempts
from reflect.judging.hidden import judge, pass_rate
from reflect.strategies.one_shot import one_shot
from reflect.tasks.task import get_task
from tests.reference_solutions import CORRECT, FLAWED


@dataclass
class R:
    text: str
    prompt_tokens: int = 40
    completion_tokens: int = 20


def test_one_shot_passes_a_correct_reply_and_counts_tokens():
    seen = []

    def chat(messages, role):
        seen.append((role, messages))
        return R(f"Here:\n```python\n{CORRECT['factorial']}```")

    run = one_shot(chat, get_task("factorial"))
    assert run.passed is True and run.stop.value == "single_draft"
    assert run.final_code.strip() == CORRECT["factorial"].strip()
    assert [(s.role, s.prompt_tokens, s.completion_tokens, s.code) for s in run.steps] == [
        ("generator", 40, 20, run.final_code)
    ]
    a = judge(get_task("factorial"), run.final_code)
    assert a.first_failure == "" and a.static_failures == []
    assert seen[0][0] == "generator" and "Requirements:" in seen[0][1][1]["content"]
    assert "assert" not in seen[0][1][1]["content"]


def test_flawed_reply_names_first_failure_and_static_failures():
    a = judge(get_task("merge_sorted"), FLAWED["merge_sorted"])
    assert not a.passed and a.first_failure.startswith("merge_sorted_lists(")
    assert any("sorted" in s for s in a.static_failures)


def test_prose_only_reply_is_a_failure_with_a_reason():
    run = one_shot(lambda m, role: R("I cannot help with that."), get_task("fibonacci"))
    assert run.passed is False and run.final_code == ""
    a = judge(get_task("fibonacci"), run.final_code)
    assert a.first_failure == "no code in the reply" and a.n_tests == 0


def test_pass_rate():
    t = get_task("count_vowels")
    assert pass_rate([judge(t, CORRECT["count_vowels"]), judge(t, FLAWED["count_vowels"])]) == 0.5
    assert pass_rate([]) == 0.0


def test_results_round_trip(monkeypatch, tmp_path):
    monkeypatch.setattr("reflect.evaluation.results.results_dir", lambda: tmp_path)
    monkeypatch.setattr("reflect.evaluation.results.recorded_dir", lambda: tmp_path)
    attempts = [judge(get_task("count_vowels"), CORRECT["count_vowels"])]
    save_attempts("01_demo", attempts, {"model": "m"})
    assert load_attempts("01_demo") == attempts
    with pytest.raises(FileNotFoundError, match="Run lesson 07 first"):
        load_attempts("07_missing")
    (tmp_path / "01_bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not a results file"):
        load_attempts("01_bad")


def test_live_runs_never_overwrite_recorded_results(monkeypatch, tmp_path):
    from reflect.evaluation import results

    monkeypatch.setattr(results, "repo_root", lambda: tmp_path)
    attempts = [judge(get_task("count_vowels"), CORRECT["count_vowels"])]
    monkeypatch.setenv("COURSE_BACKEND", "replay")
    recorded = save_attempts("01_x", attempts)
    assert recorded == tmp_path / "results" / "01_x.json"
    monkeypatch.setenv("COURSE_BACKEND", "local")
    assert load_attempts("01_x") == attempts  # falls back to the recorded results
    mine = [judge(get_task("count_vowels"), FLAWED["count_vowels"])]
    assert save_attempts("01_x", mine) == tmp_path / "build" / "results" / "01_x.json"
    assert load_attempts("01_x") == mine  # live prefers your own run
    monkeypatch.setenv("COURSE_BACKEND", "replay")
    assert load_attempts("01_x") == attempts  # and the recorded file was never touched
