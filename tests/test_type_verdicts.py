"""Typed verdicts: the report reads fields, never text, and the committed results files carry them
(tools/type_verdicts.py converted them once, to exactly what today's code writes)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from reflect.records import Run

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("type_verdicts", ROOT / "tools" / "type_verdicts.py")
tv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tv)
FILES = [*(p for p in sorted((ROOT / "results").glob("0*.jsonl")) if p.name != "06_feedback_164.jsonl"),  # its own format
         ROOT / "results" / "04_graph_vs_loop.json"]


def runs_in(path: Path) -> list[dict]:
    if path.suffix == ".jsonl":
        return [json.loads(line)["run"] for line in path.read_text().splitlines() if line.strip()]
    return list(tv.runs_in(json.loads(path.read_text())))


def as_text(run: dict) -> dict:
    """The run as it was written while verdicts were text: the label (or the note) in `verdict`."""
    steps = [{k: v for k, v in s.items() if k != "note"} | {"verdict": s["verdict"]["label"] if s["verdict"] else s["note"]}
             for s in run["steps"]]
    return {**run, "steps": steps}


def test_nothing_in_evaluation_reads_a_verdict_out_of_text():
    for path in (ROOT / "shared" / "reflect" / "evaluation").glob("*.py"):
        source = path.read_text()
        assert "import re\n" not in source and "re." not in source.replace("re.M", ""), path.name
        assert "repr(" not in source, f"{path.name}: a strategy is identified by config(), never by repr"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_committed_run_has_typed_verdicts(path):
    steps = [s for run in runs_in(path) for s in run["steps"]]
    assert steps and all(s["verdict"] is None or isinstance(s["verdict"], dict) for s in steps)
    judged = [s for s in steps if s["verdict"]]
    assert judged and all("label" in s["verdict"] and "accepted" in s["verdict"] for s in judged)
    assert all(Run.from_dict(run) for run in runs_in(path)[:20])  # and they load as Runs


def test_the_converter_writes_what_todays_strategies_write(tmp_path):
    """Runs made now (typed), turned back into text verdicts and converted, come out field for field the
    same: lesson 02's reviewer, lesson 03's critic at a threshold of 10, an unusable critique, Reflexion's
    evaluator and its tests and repeat notes, and the graph's critic."""
    from reflect.evaluation.runner import load_rows, run_bench
    from reflect.judging.controller import StopRule
    from reflect.judging.critics import LLMCritic
    from reflect.strategies.graph import ReflectionGraph
    from reflect.strategies.objects import MakerChecker, ScoredReflection
    from reflect.strategies.reflexion import Reflexion
    from reflect.tasks.task import get_task
    from reflect.testing import ScriptedChat

    task, bad = get_task("factorial"), "```python\ndef calculate_factorial(n):\n    return 1\n```"
    crit = '{"score": %s, "issues": ["x"], "strengths": [], "suggestion": "fix"}'
    judged = '{"score": %s, "verdict": "%s", "specific_issues": [], "missing_elements": []}'
    cases = [
        (MakerChecker(max_iterations=2), {"generator": [bad, bad], "reviewer": ["Fix it.", "APPROVED"]}),
        (ScoredReflection(LLMCritic(ScriptedChat({"critic": [crit % 9, "junk", "junk", crit % 10]})),
                          StopRule(threshold=10, max_iterations=3), name="strict"), {"generator": [bad], "refiner": [bad + " ", bad]}),
        (Reflexion(tests_for=lambda chat, t: ["assert calculate_factorial(3) == 6"], max_attempts=3, patience=9),
         {"generator": [bad, bad.replace("1", "2"), bad], "evaluator": ["no json", judged % (0.3, "pass"), judged % (0.3, "fail")],
          "reflector": ["r1", "r2", "r3"]}),
    ]
    for strategy, replies in cases:
        run_bench([strategy], [task], ScriptedChat(replies), tmp_path / "runs.jsonl", progress=False)
    graph = ReflectionGraph(critic_for=lambda chat: LLMCritic(chat), max_iterations=2, name="graph")
    run_bench([graph], [task], ScriptedChat({"generator": [bad], "refiner": [bad + "\n"], "critic": [crit % 4, crit % 9]}),
              tmp_path / "runs.jsonl", progress=False)
    rows = json.loads(json.dumps(load_rows(tmp_path / "runs.jsonl")))
    labels = [s["verdict"]["label"] for r in rows for s in r["run"]["steps"] if s["verdict"]]
    assert {"not approved", "approved", "score 9", "unusable (2 calls)", "0/1 passed", "pass, score 0.3",
            "unusable evaluator reply: no JSON object in the reply",
            "needs_revision (score 4)", "accepted (score 9)"} <= set(labels)  # every kind of verdict is here
    assert any(s["note"] for r in rows for s in r["run"]["steps"])
    assert [tv.type_row({**r, "run": as_text(r["run"])}) for r in rows] == rows


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_a_converted_file_converts_back_to_itself(path):
    """Each committed file, turned back into text verdicts and converted again, is what it is now."""
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        assert [tv.type_row({**r, "run": as_text(r["run"])}) for r in rows] == rows
    else:
        data = json.loads(path.read_text())
        assert tv.type_tree(json.loads(json.dumps(data), object_hook=lambda d: as_text(d) if "steps" in d and "stop" in d
                                       else d)) == data


def test_the_converter_types_each_kind_of_verdict_by_its_role():
    def one(role, label, reply="why", config=""):
        row = {"config": config, "run": {"steps": [{"role": role, "verdict": label, "reply": reply}]}}
        step = tv.type_row(row)["run"]["steps"][0]
        v = step["verdict"]
        return step["note"] if v is None else (v["accepted"], v["score"], v["passed"], v["total"], v["reason"])

    assert one("tests", "3/3 passed") == (True, None, 3, 3, "") and one("tests", "0/0 passed")[0] is False
    assert one("reviewer", "approved")[0] is True and one("reviewer", "not approved")[0] is False
    assert one("critic", "score 8")[:2] == (True, 8) and one("critic", "score 8 (2 calls)")[:2] == (True, 8)
    assert one("critic", "score 9", config="X(rule=StopRule(threshold=10, patience=2))")[:2] == (False, 9)
    assert one("critic", "unusable (2 calls)", reply="no JSON") == (None, None, None, None, "no JSON")
    assert one("critic", "needs_revision (score 4)")[:2] == (False, 4) and one("critic", "invalid")[0] is None
    assert one("evaluator", "pass, score 0.8")[:2] == (True, 0.8)
    assert one("evaluator", "no JSON object in the reply") == (False, None, None, None, "no JSON object in the reply")
    assert one("test_writer", "4 asserts") == "4 asserts" and one("generator", "same code as attempt 1").startswith("same")
    with pytest.raises(ValueError, match="not one this converter knows"):
        one("reviewer", "LGTM")


def test_a_file_with_text_verdicts_still_loads_and_says_how_to_convert_it(tmp_path):
    from reflect.evaluation.runner import load_rows

    rows = [json.loads(line) for line in (ROOT / "results" / "06_course.jsonl").read_text().splitlines()[:5]]
    old = tmp_path / "old.jsonl"
    old.write_text("".join(json.dumps({**r, "run": as_text(r["run"])}) + "\n" for r in rows))
    with pytest.warns(UserWarning, match=r"while verdicts were text.*tools/type_verdicts.py"):
        loaded = load_rows(old)
    assert len(loaded) == 5 and Run.from_dict(loaded[0]["run"]).steps  # read, labels and all, not skipped
    assert tv.convert(old) > 0 and [json.loads(line) for line in old.read_text().splitlines()] == rows


def test_a_line_keyed_by_an_old_repr_gets_its_strategys_config_and_a_stale_one_keeps_its_repr():
    spec = importlib.util.spec_from_file_location("configs_from_repr", ROOT / "tools" / "configs_from_repr.py")
    cfr = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cfr)
    from reflect.bench import strategies

    reflexion = ("Reflexion(memory_mode='reflections', window=3, max_attempts=3, token_budget=8000, store=None, "
                 "session='session-1', model_name='', seed=42, patience=3, judge_hidden=True, evaluator_max_tokens=400, "
                 "reflector_max_tokens=300, name='reflexion')")  # as lesson 06's file held it
    stale = ("ScoredReflection(critic='llm', rule=StopRule(threshold=8, max_iterations=3, patience=2, regression_drop=0.2, "
             "oscillation_window=4), seed=42, judge_hidden=True, name='scored')")  # before the sampling field existed
    rows, done = cfr.convert_rows([{"config": reflexion}, {"config": stale}], cfr.known())
    assert done == 1 and rows[0]["config"] == strategies(("reflexion",))[0].config() and rows[1]["config"] == stale


def test_configs_are_plain_values_and_differ_in_every_setting():
    from dataclasses import replace

    from reflect.bench import strategies
    from reflect.judging.controller import StopRule

    course = strategies()
    for s in course:
        config = s.config()
        assert json.loads(json.dumps(config)) == config and config["name"] == s.name  # a JSON round trip changes nothing
    configs = [json.dumps(s.config(), sort_keys=True) for s in course]
    assert len(set(configs)) == len(configs)
    scored = course[3]
    changed = [replace(scored, rule=StopRule(threshold=7, max_iterations=3)), replace(scored, seed=7), replace(scored, critic="examples"),
               replace(scored, sampling={**scored.sampling, "refiner": {"temperature": 0.3, "max_tokens": 512}})]
    assert all(c.config() != scored.config() for c in changed) and replace(scored).config() == scored.config()


def test_editing_a_prompt_makes_a_new_configuration(monkeypatch):
    from reflect.bench import strategies
    from reflect.strategies import scored

    before = [s.config() for s in strategies()]
    monkeypatch.setattr(scored, "REFINER_SYSTEM", scored.REFINER_SYSTEM + " Be brief.")  # where the refiner's request reads it
    after = [s.config() for s in strategies()]
    assert [b == a for b, a in zip(before, after, strict=True)] == [True, True, True, False, False, False, True]


def test_changing_a_roles_sampling_makes_a_new_configuration_of_the_strategies_that_call_it(monkeypatch):
    from reflect.bench import strategies
    from reflect.model.sampling import SAMPLING

    before = [s.config() for s in strategies()]
    monkeypatch.setitem(SAMPLING, "evaluator", {"temperature": 0.1})  # only Reflexion has an evaluator
    assert [b == s.config() for b, s in zip(before, strategies(), strict=True)] == [True] * 6 + [False]


def test_a_line_from_before_a_setting_existed_gets_its_old_default_and_the_committed_files_resume():
    spec = importlib.util.spec_from_file_location("upgrade_configs", ROOT / "tools" / "upgrade_configs.py")
    up = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(up)
    from reflect.bench import strategies
    from reflect.evaluation.runner import current_rows
    from reflect.tasks.task import humaneval_tasks

    resample = strategies(("resample",))[0]
    old = {k: v for k, v in resample.config().items() if k not in ("first", "feedback")}  # as lesson 06 wrote it
    rows, done = up.upgrade_rows([{"config": old}, {"config": resample.config()}, {"config": "Stale(repr)"}])
    assert done == 1 and rows[0]["config"] == resample.config() and rows[2]["config"] == "Stale(repr)"
    assert up.upgrade_rows(rows) == (rows, 0)  # twice changes nothing
    ids = [t.id for t in humaneval_tasks()[:80]]
    found = current_rows(ROOT / "results" / "06_humaneval.jsonl", strategies(), ids)  # today's configs find every run
    assert len(found) == 7 * 80
    arms = strategies(("blind-sample", "repair-sample", "repair-edit-sample"))
    assert len(current_rows(ROOT / "results" / "06_feedback.jsonl", arms, ids)) == 3 * 80  # lesson 06's section 14
