"""A run's record and its key: every committed run carries typed verdicts (the report reads fields,
never text), and a strategy's `config()` is plain values that change with every setting, prompt and
role's sampling, so the committed results files resume and a changed setup is a new configuration."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reflect.evaluation.runner import config_of
from reflect.records import Run

ROOT = Path(__file__).resolve().parents[1]
FILES = [*sorted((ROOT / "results").glob("0*.jsonl")), ROOT / "results" / "04_graph_vs_loop.json"]


def each_run(data: Any):
    """Every run (a dict with steps and a stop) anywhere inside a results file's JSON."""
    if isinstance(data, dict):
        if "steps" in data and "stop" in data:
            yield data
        else:
            for v in data.values():
                yield from each_run(v)
    elif isinstance(data, list):
        for v in data:
            yield from each_run(v)


def runs_in(path: Path) -> list[dict]:
    if path.suffix == ".jsonl":
        return [json.loads(line)["run"] for line in path.read_text().splitlines() if line.strip()]
    return list(each_run(json.loads(path.read_text())))


def test_nothing_in_evaluation_reads_a_verdict_out_of_text():
    for path in (ROOT / "shared" / "reflect" / "evaluation").glob("*.py"):
        source = path.read_text()
        assert "import re\n" not in source and "re." not in source.replace("re.M", ""), path.name
        assert "repr(" not in source, (
            f"{path.name}: a strategy is identified by config(), never by repr"
        )


@pytest.mark.parametrize("path", sorted((ROOT / "results").glob("*.jsonl")), ids=lambda p: p.name)
def test_every_committed_results_line_names_its_configuration_as_plain_values(path):
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    configs = [r["config"] for r in rows if "config" in r]
    assert all(isinstance(c, dict) and ("strategy" in c or "experiment" in c) for c in configs), (
        path.name
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_committed_run_has_typed_verdicts(path):
    steps = [s for run in runs_in(path) for s in run["steps"]]
    assert steps and all(s["verdict"] is None or isinstance(s["verdict"], dict) for s in steps)
    judged = [s for s in steps if s["verdict"]]
    assert judged and all("label" in s["verdict"] and "accepted" in s["verdict"] for s in judged)
    assert all(Run.from_dict(run) for run in runs_in(path)[:20])  # and they load as Runs


def test_configs_are_plain_values_and_differ_in_every_setting():
    from dataclasses import replace

    from course_bench import strategies
    from reflect.judging.controller import StopRule

    course = strategies()
    for s in course:
        config = config_of(s)
        assert (
            json.loads(json.dumps(config)) == config and config["name"] == s.name
        )  # a JSON round trip changes nothing
    configs = [json.dumps(config_of(s), sort_keys=True) for s in course]
    assert len(set(configs)) == len(configs)
    scored = course[3]
    changed = [
        replace(scored, rule=StopRule(threshold=7, max_iterations=3)),
        replace(scored, seed=7),
        replace(scored, critic="examples"),
        replace(
            scored, sampling={**scored.sampling, "refiner": {"temperature": 0.3, "max_tokens": 512}}
        ),
    ]
    assert all(config_of(c) != config_of(scored) for c in changed) and config_of(
        replace(scored)
    ) == config_of(scored)


def test_editing_a_prompt_makes_a_new_configuration(monkeypatch):
    from course_bench import strategies
    from reflect.tasks import prompts

    before = [config_of(s) for s in strategies()]
    # the one place the refiner's prompt lives, where its request reads it
    monkeypatch.setattr(prompts, "REFINER_SYSTEM", prompts.REFINER_SYSTEM + " Be brief.")
    after = [config_of(s) for s in strategies()]
    assert [b == a for b, a in zip(before, after, strict=True)] == [
        True,
        True,
        True,
        False,
        False,
        False,
        True,
    ]


def test_changing_a_roles_sampling_makes_a_new_configuration_of_the_strategies_that_call_it(
    monkeypatch,
):
    from course_bench import strategies
    from reflect.model.roles import SAMPLING

    before = [config_of(s) for s in strategies()]
    monkeypatch.setitem(
        SAMPLING, "evaluator", {"temperature": 0.1}
    )  # only Reflexion has an evaluator
    assert [b == config_of(s) for b, s in zip(before, strategies(), strict=True)] == [True] * 6 + [
        False
    ]


def test_todays_configs_find_every_committed_run_of_lesson_06():
    from course_bench import strategies
    from reflect.evaluation.runner import current_rows
    from reflect.tasks.task import humaneval_tasks

    ids = [t.id for t in humaneval_tasks()[:80]]
    found = current_rows(
        ROOT / "results" / "06_humaneval.jsonl", strategies(), ids
    )  # today's configs find every run
    assert len(found) == 7 * 80
    arms = strategies(("blind-sample", "repair-sample", "repair-edit-sample"))
    assert (
        len(current_rows(ROOT / "results" / "06_feedback.jsonl", arms, ids)) == 3 * 80
    )  # lesson 06's section 9, the pilot


def test_a_line_whose_verdict_is_text_is_skipped_with_its_line_number(tmp_path):
    from reflect.evaluation.runner import load_rows

    good = json.loads((ROOT / "results" / "06_course.jsonl").read_text().splitlines()[-1])
    text = json.loads(json.dumps(good))
    judged = next(s for s in text["run"]["steps"] if s["verdict"])
    judged["verdict"] = judged["verdict"][
        "label"
    ]  # as runs were written before verdicts were typed
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(text) + "\n")
    with pytest.warns(UserWarning, match=r"runs\.jsonl:2: skipped"):
        rows = load_rows(path)
    assert rows == [good]
