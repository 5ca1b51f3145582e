"""Lesson 06's experiment, feedback or more tries (reflect.strategies.feedback, reflect.evaluation.feedback),
on a scripted model: the four arms share one first draft, its evidence and its check, draw samples with the
same sampling and seeds, differ only in the after-failure part of a sample's prompt, and count every call's
tokens; the recording resumes and refuses a file of another setup; the stated analysis computes what it says."""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import asdict
from pathlib import Path

import pytest

from reflect.evaluation import feedback as fx
from reflect.model.sampling import sampling
from reflect.records import Stop
from reflect.strategies import feedback as fb
from reflect.tasks.prompts import GENERATOR_PROMPT
from reflect.tasks.task import get_task, humaneval_tasks
from reflect.testing import ScriptedChat

HE0 = get_task("HumanEval/0")  # its statement shows two examples: the evidence, no test writer
FACT = get_task("factorial")  # no examples: the agent writes its own tests, once
GOOD = (
    "```python\ndef has_close_elements(numbers, threshold):\n"
    "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n```"
)
NEVER = "```python\ndef has_close_elements(numbers, threshold):\n    return False\n```"  # passes the first example only
ALWAYS = "```python\ndef has_close_elements(numbers, threshold):\n    return True\n```"  # passes the second only
BROKEN = "```python\ndef has_close_elements(numbers, threshold):\n    return numbers[99]\n```"  # passes neither
CRITIQUE_JSON = json.dumps(
    {
        "score": 3,
        "issues": ["it never compares two numbers"],
        "strengths": [],
        "suggestion": "compare every pair against the threshold",
    }
)
FAILED = "assert has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3) == True # output: False"


def body(reply: str) -> str:
    return reply.split("```python\n")[1].split("```")[0]


def start_of(first: str = NEVER, task=HE0) -> tuple[fb.Start, ScriptedChat]:
    chat = ScriptedChat({"generator": [first], "critic": [CRITIQUE_JSON]})
    return fb.first_draft(task, chat), chat


def test_the_start_is_one_first_draft_its_examples_and_after_a_failure_one_critique():
    start, chat = start_of(NEVER)
    assert [c.role for c in chat.calls] == ["generator", "critic"]
    assert chat.calls[0].params == sampling("generator") and chat.calls[0].messages == [
        {"role": "system", "content": GENERATOR_PROMPT},
        {"role": "user", "content": HE0.prompt()},
    ]  # one-shot's request
    assert start.source == "examples" and len(start.asserts) == 2 and start.needs_samples
    assert [f"{a} # output: {o}" for a, o in start.failed] == [FAILED]
    assert (
        "never compares two numbers" in start.critique and start.critique_steps[0].role == "critic"
    )
    assert fb.Start.from_dict(json.loads(json.dumps(start.to_dict()))) == start
    passing, chat = start_of(GOOD)
    assert (
        [c.role for c in chat.calls] == ["generator"]
        and not passing.needs_samples
        and not passing.critique
    )


def arm_runs(start: fb.Start, replies: list[str], replicate: int = 0, task=HE0):
    """Each arm's run on the same start, each with its own scripted sampler answering `replies`."""
    out = {}
    for arm in fb.ARMS:
        chat = ScriptedChat({"generator": list(replies)})
        out[arm] = (fb.after_failure(task, start, arm, replicate, chat), chat)
    return out


def test_the_arms_differ_only_in_what_a_sample_sees_after_the_failed_first_draft():
    start, _ = start_of(NEVER)
    runs = arm_runs(start, [BROKEN, GOOD])
    shown = {arm: [c.messages for c in chat.calls] for arm, (_, chat) in runs.items()}
    for arm, (run, chat) in runs.items():
        assert [c.role for c in chat.calls] == [
            "generator",
            "generator",
        ]  # no first draft asked again, no critique
        assert [c.params for c in chat.calls] == [
            {**fb.SAMPLE, "seed": 43},
            {**fb.SAMPLE, "seed": 44},
        ]
        for messages in shown[arm]:
            assert messages[0] == {"role": "system", "content": GENERATOR_PROMPT}
            assert messages[1]["content"].startswith(HE0.prompt())
        sent = shown[arm][0][1]["content"]
        assert (FAILED in sent) == (
            arm in (fb.CHECKS, fb.CHECKS_CODE)
        )  # the failed check and what the draft gave
        assert (body(NEVER) in sent) == (arm in (fb.CHECKS_CODE, fb.CRITIQUE))  # the old code
        assert ("never compares two numbers" in sent) == (arm == fb.CRITIQUE)  # the critique
        assert (
            body(BROKEN) not in sent and shown[arm][0] == shown[arm][1]
        )  # every sample sees the first draft's part
        assert run.steps[0].code == start.code == body(NEVER)  # the one first draft, in every arm
        assert (
            run.stop is Stop.ACCEPTED
            and run.final_code == body(GOOD)
            and run.chosen.startswith("draft 3: 2/2")
        )
    assert (
        shown[fb.BLIND][0][1]["content"] == HE0.prompt()
    )  # blind: the task, exactly as the first draft saw it


def test_tokens_count_every_call_of_an_arm_the_shared_first_draft_and_the_critique_included():
    start, _ = start_of(NEVER)
    runs = arm_runs(start, [BROKEN, GOOD])
    shared = sum(s.prompt_tokens + s.completion_tokens for s in start.steps if s.kind == "model")
    critique = sum(s.prompt_tokens + s.completion_tokens for s in start.critique_steps)
    assert shared > 0 and critique > 0
    for arm, (run, _) in runs.items():
        assert run.tokens == shared + (critique if arm == fb.CRITIQUE else 0) + sum(
            s.prompt_tokens + s.completion_tokens
            for s in run.steps[len(start.steps) :]
            if s.role == "generator"
        )
        assert run.calls == 1 + 2 + (1 if arm == fb.CRITIQUE else 0)
    assert runs[fb.CRITIQUE][0].tokens_by_role["critic"] == critique


def test_the_test_writer_is_asked_once_per_problem_and_counted_in_every_arm():
    own = "```python\nassert calculate_factorial(0) == 1\nassert calculate_factorial(3) == 6\n```"
    wrong = "```python\ndef calculate_factorial(n):\n    return 1\n```"
    right = "```python\ndef calculate_factorial(n):\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n```"
    chat = ScriptedChat({"test_writer": [own], "generator": [wrong], "critic": [CRITIQUE_JSON]})
    start = fb.first_draft(FACT, chat)
    assert [c.role for c in chat.calls] == [
        "test_writer",
        "generator",
        "critic",
    ] and start.source == "self-tests"
    for run, arm_chat in arm_runs(start, [right], task=FACT).values():
        assert all(c.role == "generator" for c in arm_chat.calls)  # the tests are not written again
        assert (
            run.tokens_by_role["test_writer"]
            == start.steps[0].prompt_tokens + start.steps[0].completion_tokens
        )


def test_seeds_line_up_across_arms_and_differ_across_replicates():
    start, _ = start_of(NEVER)
    seeds = {
        r: {
            arm: [c.params["seed"] for c in chat.calls]
            for arm, (_, chat) in arm_runs(start, [BROKEN] * 4, r).items()
        }
        for r in (0, 1, 2)
    }
    for r, by_arm in seeds.items():
        assert all(s == [fb.seed_of(r, j) for j in (1, 2, 3, 4)] for s in by_arm.values())
    assert len({fb.seed_of(r, j) for r in range(3) for j in range(1, 5)}) == 12


def test_the_stop_rule_at_most_four_samples_and_the_best_draft_the_earliest_on_a_tie():
    start, _ = start_of(BROKEN)  # passes neither example
    run, chat = arm_runs(start, [ALWAYS, NEVER, BROKEN, ALWAYS, GOOD])[fb.CHECKS]
    assert len(chat.calls) == fb.SAMPLES_AFTER == 4 and run.stop is Stop.MAX_ITERATIONS
    assert run.final_code == body(ALWAYS) and run.chosen.startswith(
        "draft 2: 1/2"
    )  # 1/2 twice: the earlier
    start, _ = start_of(
        NEVER
    )  # 1/2: a sample must do better than the first draft to be chosen over it
    run, _ = arm_runs(start, [ALWAYS, BROKEN, ALWAYS, BROKEN])[fb.BLIND]
    assert run.final_code == body(NEVER) and run.chosen.startswith("draft 1: 1/2")


def test_a_first_draft_that_passes_its_evidence_makes_no_call_in_any_arm():
    start, _ = start_of(GOOD)
    for arm in fb.ARMS:
        run = fb.after_failure(HE0, start, arm, 0, fx._no_call)
        assert run.stop is Stop.ACCEPTED and run.final_code == body(GOOD) and run.calls == 1


def test_a_provider_error_ends_the_run_with_what_it_had():
    from reflect.model.llm import ModelError

    start, _ = start_of(NEVER)
    chat = ScriptedChat({"generator": [ALWAYS, ModelError("server gone")]})
    run = fb.after_failure(HE0, start, fb.CHECKS, 0, chat)
    assert (
        run.stop is Stop.PROVIDER_ERROR
        and "server gone" in run.error
        and run.final_code == body(NEVER)
    )


def test_the_setup_fingerprint_changes_with_an_arm_request(monkeypatch):
    before = fb.experiment_config()
    monkeypatch.setattr(
        fb, "critique_request", lambda task, code, critique: f"{task.prompt()}\n{code}\n{critique}"
    )
    assert fb.experiment_config()["prompts"] != before["prompts"]


# --- the recording -------------------------------------------------------------------------------


class Sampler:
    """A scripted model for the recording: first drafts by problem, samples by (arm's prompt, seed)."""

    def __init__(self, firsts: dict[str, str], sample: str = GOOD):
        self.firsts, self.sample, self.calls = firsts, sample, []

    def __call__(self, messages, role="generator", **params):
        from reflect.testing import FakeReply

        self.calls.append((role, params.get("seed"), messages[-1]["content"]))
        if role == "critic":
            return FakeReply(CRITIQUE_JSON, 50, 20)
        if params.get("temperature") == 0:
            tid = next(t for t in self.firsts if get_task(t).prompt() == messages[-1]["content"])
            return FakeReply(self.firsts[tid], 30, 10)
        return FakeReply(self.sample, 40, 12)


def test_the_recording_resumes_adds_replicates_and_refuses_another_setup(tmp_path, monkeypatch):
    path = tmp_path / "fb.jsonl"
    tasks = [HE0, get_task("HumanEval/2")]
    truncate = (
        "```python\ndef truncate_number(number: float) -> float:\n    return number % 1.0\n```"
    )
    model = Sampler({"HumanEval/0": NEVER, "HumanEval/2": truncate})
    fx.record(tasks, model, path, replicates=1, concurrency=1, progress=False)
    assert [r for r, *_ in model.calls].count(
        "generator"
    ) == 2 + 4  # two first drafts, one sample per arm on /0
    assert sum(r == "critic" for r, *_ in model.calls) == 1
    model.calls.clear()
    fx.record(tasks, model, path, replicates=1, concurrency=1, progress=False)
    assert model.calls == []  # nothing left to do
    with path.open("a") as f:
        f.write('{"kind": "arm", "task_id": "HumanEval/0", "ar')  # a line cut off by a kill
    fx.record(tasks, model, path, replicates=2, concurrency=1, progress=False)
    assert [(r, s) for r, s, _ in model.calls] == [
        ("generator", fb.seed_of(1, 1))
    ] * 4  # replicate 1 only
    table, R = fx.rows(path)
    assert R == 2 and {(r["strategy"], r["task_id"]) for r in table} >= {
        (a, t.id) for a in fb.ARMS for t in tasks
    }
    assert all(
        r["run"]["steps"][0]["code"] == body(NEVER) for r in table if r["task_id"] == "HumanEval/0"
    )
    monkeypatch.setattr(
        fb, "SAMPLES_AFTER", 5
    )  # another setup: the old lines must not count as this one's
    monkeypatch.setattr(
        fx, "experiment_config", lambda: {**fb.experiment_config(), "samples_after": 5}
    )
    with pytest.raises(fx.SetupChanged, match="another setup"):
        fx.record(tasks, model, path, replicates=1, concurrency=1, progress=False)


def test_rows_leave_out_a_problem_whose_replicate_is_unfinished(tmp_path):
    path = tmp_path / "fb.jsonl"
    tasks = [HE0, get_task("HumanEval/2")]
    model = Sampler(
        {
            "HumanEval/0": NEVER,
            "HumanEval/2": NEVER.replace("has_close_elements", "truncate_number"),
        }
    )
    fx.record_starts(tasks, model, path, progress=False)
    jobs = fx.arm_jobs(tasks, path, 1)
    assert [(t.id, a) for t, a, _ in jobs] == [(t.id, a) for t in tasks for a in fb.ARMS]
    fx.record_arms(tasks[:1], model, path, 1, concurrency=1, progress=False)
    table, R = fx.rows(path)
    assert (
        R == 1
        and {r["task_id"] for r in table} == {"HumanEval/0"}
        and fx.incomplete(path, 1) == ["HumanEval/2"]
    )


# --- the analysis ---------------------------------------------------------------------------------


def brute_p(diffs):
    observed = abs(sum(diffs))
    signs = list(itertools.product((1, -1), repeat=len(diffs)))
    return sum(
        abs(sum(s * d for s, d in zip(sg, diffs, strict=True))) >= observed - 1e-9 for sg in signs
    ) / len(signs)


def test_the_sign_flip_test_is_exact():
    rng = random.Random(1)
    for _ in range(40):
        diffs = [
            rng.choice((-1, -2 / 3, -1 / 3, 0, 1 / 3, 2 / 3, 1)) for _ in range(rng.randint(1, 10))
        ]
        assert fx.sign_flip_p(diffs) == pytest.approx(
            brute_p([d for d in diffs if d]) if any(diffs) else 1.0
        )
    assert fx.sign_flip_p([1.0] * 6) == pytest.approx(2 / 64) and fx.sign_flip_p(
        [1.0] * 5
    ) == pytest.approx(2 / 32)
    assert fx.smallest_detectable(164) == (6, 6 / 164)
    assert fx.smallest_detectable(164, replicates=2) == (
        6,
        6 / 328,
    )  # half a replicate set each: the same p
    with pytest.raises(ValueError, match="multiples"):
        fx.sign_flip_p([0.123])


def test_holm_adjusts_step_down_and_keeps_the_order():
    assert fx.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert fx.holm([0.5, 0.001]) == pytest.approx([0.5, 0.002])


def test_the_bootstrap_interval_is_over_problems_and_holds_the_mean():
    diffs = [1.0] * 3 + [0.0] * 17
    lo, hi = fx.bootstrap_interval(diffs)
    assert 0 <= lo < 0.15 < hi <= 0.4
    assert fx.bootstrap_interval([0.5] * 10) == (0.5, 0.5)


def row(strategy, task, passed, replicate=0, first=True):
    return {
        "strategy": strategy,
        "task_id": task,
        "replicate": replicate,
        "passed_first": first,
        "run": {"passed": passed},
        "drafts": {},
        "leaks": [],
    }


def test_compare_uses_the_per_problem_share_of_replicates():
    table = (
        [row(fb.CHECKS, "a", p, r) for r, p in enumerate((True, True, False))]
        + [row(fb.BLIND, "a", p, r) for r, p in enumerate((False, False, False))]
        + [row(fb.CHECKS, "b", True), row(fb.CHECKS, "b", True, 1), row(fb.CHECKS, "b", True, 2)]
        + [row(fb.BLIND, "b", True), row(fb.BLIND, "b", True, 1), row(fb.BLIND, "b", True, 2)]
    )
    c = fx.compare(table, fb.CHECKS, fb.BLIND)
    assert c["effect"] == pytest.approx((2 / 3) / 2) and (c["better"], c["worse"], c["same"]) == (
        1,
        0,
        1,
    )
    assert c["p"] == pytest.approx(1.0)  # one problem can never be significant


def test_failure_kinds():
    def start(code, failed):
        return fb.Start("t", code, "examples", ("assert f() == 1",), tuple(failed), ())

    assert fx.failure_kind(start("def f(:\n", [("assert f() == 1", "not run")])) == "syntax"
    assert fx.failure_kind(start("", [("(no code)", "no code")])) == "syntax"
    assert (
        fx.failure_kind(
            start(
                "def f():\n    return 1/0\n", [("assert f() == 1", "raised ZeroDivisionError: x")]
            )
        )
        == "exception"
    )
    assert (
        fx.failure_kind(start("def f():\n    return 2\n", [("assert f() == 1", "2")]))
        == "assertion"
    )


def test_the_curve_replays_each_arm_over_j_from_its_runs(tmp_path):
    path = tmp_path / "fb.jsonl"
    model = Sampler({"HumanEval/0": NEVER})
    fx.record([HE0], model, path, replicates=1, concurrency=1, progress=False)
    table, _ = fx.rows(path)
    stats = fx.arm_stats(table)
    for arm in fb.ARMS:
        points = fx.curve(table, arm)
        assert (
            points[0][1] == 0.0 and points[-1][1] == stats[arm]["pass_rate"] == 1.0
        )  # NEVER fails, GOOD passes
        assert points[0][2] == stats["one-shot"]["tokens_per_task"]  # the first draft alone
        assert points[-1][2] == pytest.approx(stats[arm]["tokens_per_task"])
    assert (
        stats[fb.CRITIQUE]["tokens_per_task"] == stats[fb.BLIND]["tokens_per_task"] + 70
    )  # the critique's call
    assert stats[fb.CHECKS]["repaired"] == 1 and stats[fb.CHECKS]["first_code_returned"] == 0
    assert fx.by_failure(table) == {
        "assertion": {"problems": 1, "first_passed": 0, **dict.fromkeys(fb.ARMS, 1.0)}
    }


def test_the_curve_charges_the_evidence_only_once_a_sample_is_drawn(tmp_path):
    own = "```python\nassert calculate_factorial(0) == 1\nassert calculate_factorial(3) == 6\n```"
    wrong = "```python\ndef calculate_factorial(n):\n    return 1\n```"
    right = "```python\ndef calculate_factorial(n):\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n```"
    start = fb.first_draft(
        FACT, ScriptedChat({"test_writer": [own], "generator": [wrong], "critic": [CRITIQUE_JSON]})
    )
    run = fb.after_failure(FACT, start, fb.CHECKS, 0, ScriptedChat({"generator": [right]}))
    table = [
        {
            "strategy": fb.CHECKS,
            "task_id": FACT.id,
            "replicate": 0,
            "passed_first": False,
            "run": run.to_dict(),
            "drafts": {"1": False, "3": True},
            "leaks": [],
        }
    ]
    first, writer = start.steps[1], start.steps[0]
    assert first.role == "generator" and writer.role == "test_writer"
    (j0, rate0, tokens0), (j1, rate1, tokens1), *_ = fx.curve(table, fb.CHECKS)
    assert (rate0, tokens0) == (0.0, first.prompt_tokens + first.completion_tokens)
    assert (rate1, tokens1) == (1.0, run.tokens)


RESULTS = Path(__file__).resolve().parents[1] / "results" / "06_feedback_164.jsonl"


def test_the_committed_recording_shares_each_problems_first_draft_and_leaks_nothing():
    """The recording, as far as it has gone: its setup is the code's (`_load` refuses another), its
    problems are HumanEval's in order, every arm's run begins with its problem's shared steps verbatim
    (so its first draft is that problem's one first draft), and no hidden test line reached a prompt."""
    starts, arms = fx.load(RESULTS)
    assert starts and list(starts) == [t.id for t in humaneval_tasks()][: len(starts)]
    for (tid, _arm, _r), line in arms.items():
        start = fb.Start.from_dict(starts[tid]["start"])
        assert start.needs_samples, tid
        shared = [asdict(s) for s in start.steps]
        assert line["run"]["steps"][: len(shared)] == shared, tid
        assert not line["leaks"], tid
    assert not any(row["leaks"] for row in starts.values())


def test_the_command_reports_a_recording_and_says_when_there_is_nothing_to_report(tmp_path, capsys):
    from reflect.bench import feedback as cli

    path = tmp_path / "fb.jsonl"
    assert (
        cli.main(["--report", "--out", str(path)]) == 1
        and "no analysis yet" in capsys.readouterr().out
    )
    fx.record(
        [HE0], Sampler({"HumanEval/0": NEVER}), path, replicates=1, concurrency=1, progress=False
    )
    assert cli.main(["--report", "--out", str(path), "--replicates", "1"]) == 0
    out = capsys.readouterr().out
    assert (
        "1 problems, 1 replicate(s)" in out
        and "primary: does feedback:checks beat feedback:blind?" in out
    )
