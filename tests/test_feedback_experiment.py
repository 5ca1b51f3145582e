"""Lesson 06's fair test, feedback or more tries, on a scripted model: the four arms
(`reflect.evaluation.feedback.feedback_arms`, `Resample` configurations) send one-shot's request for the first
draft, draw samples with the same sampling and seeds, differ only in the after-failure part of a sample's
prompt, and count every call's tokens; through the runner and the request cache they share each problem's
first draft, resume, and add replicates; `reflect.evaluation.feedback` reads the runs and computes the stated
analysis; the committed recording gives every arm of a problem the same first steps."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from course_bench import fair_test
from reflect.evaluation import feedback as fx
from reflect.evaluation.feedback import SAMPLES_AFTER, feedback_arm, feedback_arms
from reflect.evaluation.runner import config_of, current_rows, load_rows, run_bench
from reflect.model.cache import CachedChat
from reflect.model.roles import sampling
from reflect.records import Stop
from reflect.tasks.prompts import GENERATOR_PROMPT
from reflect.tasks.task import get_task, humaneval_tasks
from reflect.testing import FakeReply, ScriptedChat

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
SAMPLE = {"temperature": 0.6, "max_tokens": 512}
OWN = "```python\nassert calculate_factorial(0) == 1\nassert calculate_factorial(3) == 6\n```"
FACT_WRONG = "```python\ndef calculate_factorial(n):\n    return 1\n```"
FACT_RIGHT = "```python\ndef calculate_factorial(n):\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n```"


def body(reply: str) -> str:
    return reply.split("```python\n")[1].split("```")[0]


def arm_runs(first: str, samples: list[str], replicate: int = 0, task=HE0):
    """Each arm's run on `task`, its first draft `first` and its samples `samples`, each arm with its own
    scripted model."""
    out = {}
    for arm in fx.ARMS:
        chat = ScriptedChat(
            {"generator": [first, *samples], "critic": [CRITIQUE_JSON], "test_writer": [OWN]}
        )
        out[arm] = (feedback_arm(arm, replicate).run(task, chat), chat)
    return out


def test_the_first_draft_is_one_shots_request_and_only_the_critique_arm_asks_the_critic():
    for arm, (run, chat) in arm_runs(NEVER, [GOOD]).items():
        assert chat.calls[0].params == sampling("generator") and chat.calls[0].messages == [
            {"role": "system", "content": GENERATOR_PROMPT},
            {"role": "user", "content": HE0.prompt()},
        ]  # one-shot's request
        roles = [c.role for c in chat.calls]
        assert roles == ["generator", *(["critic"] if arm == fx.CRITIQUE else []), "generator"]
        if arm == fx.CRITIQUE:
            assert run.steps[2].role == "critic" and run.steps[2].note == "critique, score 3"
    for run, chat in arm_runs(GOOD, []).values():
        assert [c.role for c in chat.calls] == [
            "generator"
        ]  # passed its evidence: no critique, no sample
        assert run.stop is Stop.ACCEPTED and run.final_code == body(GOOD) and run.calls == 1


def test_the_arms_differ_only_in_what_a_sample_sees_after_the_failed_first_draft():
    runs = arm_runs(NEVER, [BROKEN, GOOD])
    for arm, (run, chat) in runs.items():
        samples = [c for c in chat.calls if c.role == "generator"][1:]
        assert [c.params for c in samples] == [{**SAMPLE, "seed": 43}, {**SAMPLE, "seed": 44}]
        for c in samples:
            assert c.messages[0] == {"role": "system", "content": GENERATOR_PROMPT}
            assert c.messages[1]["content"].startswith(HE0.prompt())
        sent = samples[0].messages[1]["content"]
        assert (FAILED in sent) == (arm in (fx.CHECKS, fx.CHECKS_CODE))  # the failed check
        assert (body(NEVER) in sent) == (arm in (fx.CHECKS_CODE, fx.CRITIQUE))  # the old code
        assert ("never compares two numbers" in sent) == (arm == fx.CRITIQUE)  # the critique
        assert body(BROKEN) not in sent and samples[0].messages == samples[1].messages
        assert run.steps[0].code == body(NEVER)  # the one first draft, in every arm
        assert run.stop is Stop.ACCEPTED and run.final_code == body(GOOD)
    blind = [c for c in runs[fx.BLIND][1].calls if c.role == "generator"]
    assert (
        blind[1].messages[1]["content"] == HE0.prompt()
    )  # blind: the task as the first draft saw it
    configs = [config_of(feedback_arm(arm)) for arm in fx.ARMS]
    assert all(
        {k for k in c if c[k] != configs[0][k]} <= {"feedback", "name", "prompts"} for c in configs
    )  # the prompts differ only by the critic's, in the critique arm


def test_tokens_count_every_call_of_an_arm_the_test_writer_and_the_critique_included():
    runs = arm_runs(FACT_WRONG, [FACT_RIGHT], task=FACT)
    for arm, (run, chat) in runs.items():
        assert [c.role for c in chat.calls][:2] == ["test_writer", "generator"]
        assert run.tokens == sum(s.prompt_tokens + s.completion_tokens for s in run.steps)
        assert run.calls == len(chat.calls) == 3 + (arm == fx.CRITIQUE)
        assert run.tokens_by_role["test_writer"] > 0
    assert runs[fx.CRITIQUE][0].tokens_by_role["critic"] > 0
    assert "critic" not in runs[fx.CHECKS][0].tokens_by_role


def test_seeds_line_up_across_arms_and_differ_across_replicates():
    seeds = {
        r: {
            arm: [c.params["seed"] for c in chat.calls if c.role == "generator"][1:]
            for arm, (_, chat) in arm_runs(NEVER, [BROKEN] * 4, r).items()
        }
        for r in (0, 1, 2)
    }
    for r, by_arm in seeds.items():
        assert all(s == [42 + 100 * r + j for j in (1, 2, 3, 4)] for s in by_arm.values())
    assert len({s for by_arm in seeds.values() for v in by_arm.values() for s in v}) == 12


def test_the_stop_rule_at_most_four_samples_and_the_best_draft_the_earliest_on_a_tie():
    run, chat = arm_runs(BROKEN, [ALWAYS, NEVER, BROKEN, ALWAYS, GOOD])[fx.CHECKS]
    assert len(chat.calls) == 1 + SAMPLES_AFTER and run.stop is Stop.MAX_ITERATIONS
    assert run.final_code == body(ALWAYS) and run.chosen.startswith(
        "draft 2: 1/2"
    )  # the earlier 1/2
    run, _ = arm_runs(NEVER, [ALWAYS, BROKEN, ALWAYS, BROKEN])[fx.BLIND]
    assert run.final_code == body(NEVER) and run.chosen.startswith("draft 1: 1/2")


def test_a_provider_error_ends_the_run_with_what_it_had():
    from reflect.model.llm import ModelError

    chat = ScriptedChat({"generator": [NEVER, ALWAYS, ModelError("server gone")]})
    run = feedback_arm(fx.CHECKS).run(HE0, chat)
    assert run.stop is Stop.PROVIDER_ERROR and "server gone" in run.error
    assert run.final_code == body(NEVER)


# --- the recording, through the runner -----------------------------------------------------------


class Sampler:
    """A scripted model for the recording: first drafts by problem, samples by (arm's prompt, seed)."""

    def __init__(self, firsts: dict[str, str], sample: str = GOOD, tests: str = OWN):
        self.firsts, self.sample, self.tests, self.calls = firsts, sample, tests, []

    def __call__(self, messages, role="generator", **params):
        self.calls.append((role, params.get("seed"), messages[-1]["content"]))
        if role == "critic":
            return FakeReply(CRITIQUE_JSON, 50, 20)
        if role == "test_writer":
            return FakeReply(self.tests, 20, 8)
        if params.get("temperature") == 0:
            tid = next(t for t in self.firsts if get_task(t).prompt() == messages[-1]["content"])
            return FakeReply(self.firsts[tid], 30, 10)
        return FakeReply(self.sample, 40, 12)


TRUNCATE = "```python\ndef truncate_number(number: float) -> float:\n    return number % 1.0\n```"


def test_the_arms_share_each_first_draft_through_the_cache_resume_and_add_replicates(tmp_path):
    path, tasks = tmp_path / "fb.jsonl", [HE0, get_task("HumanEval/2")]
    model = Sampler({"HumanEval/0": NEVER, "HumanEval/2": TRUNCATE})
    chat = CachedChat(model, seeded=True)
    run_bench(feedback_arms(1), tasks, chat, path, progress=False)
    firsts = [c for c in model.calls if c[0] == "generator" and c[1] == 42]
    assert (
        len(firsts) == 2
    )  # one first draft per problem, asked once: the cache answered the others
    assert sum(r == "critic" for r, *_ in model.calls) == 1  # the critique arm, on /0 only
    assert sum(r == "generator" for r, *_ in model.calls) == 2 + 4  # and one sample per arm on /0
    model.calls.clear()
    run_bench(feedback_arms(1), tasks, chat, path, progress=False)
    assert model.calls == []  # nothing left to do
    run_bench(feedback_arms(2), tasks, chat, path, progress=False)
    assert [(r, s) for r, s, _ in model.calls] == [
        ("generator", 42 + 100 + 1)
    ] * 4  # replicate 1 only
    table, R = fx.rows(path)
    assert R == 2 and {(r["strategy"], r["task_id"], r["replicate"]) for r in table} == {
        (a, t.id, r) for a in fx.ARMS for t in tasks for r in (0, 1)
    } | {(fx.ONE_SHOT, t.id, 0) for t in tasks}
    assert all(
        r["run"]["steps"][0]["code"] == body(NEVER) for r in table if r["task_id"] == "HumanEval/0"
    )
    assert fx.rows(path, replicates=1)[1] == 1


def test_rows_leave_out_a_problem_whose_replicate_is_unfinished(tmp_path):
    path, tasks = tmp_path / "fb.jsonl", [HE0, get_task("HumanEval/2")]
    model = CachedChat(Sampler({"HumanEval/0": NEVER, "HumanEval/2": TRUNCATE}), seeded=True)
    run_bench(feedback_arms(1), tasks, model, path, progress=False)
    run_bench(feedback_arms(2)[4:], tasks[1:], model, path, progress=False)  # replicate 1 of /2
    run_bench(feedback_arms(2)[4:6], tasks[:1], model, path, progress=False)  # two arms of it on /0
    table, R = fx.rows(path)
    assert R == 2 and {r["task_id"] for r in table} == {"HumanEval/2"}
    assert fx.incomplete(path, 2) == ["HumanEval/0"] and fx.incomplete(path, 1) == []
    one = {r["task_id"]: r for r in fx.rows(path, 1)[0] if r["strategy"] == fx.ONE_SHOT}
    assert one["HumanEval/0"]["failure"] == "assertion" and one["HumanEval/2"]["failure"] is None
    assert one["HumanEval/0"]["source"] == "examples"
    assert one["HumanEval/0"]["run"]["steps"][0]["index"] == 0


def test_the_command_reports_a_recording(tmp_path, capsys):
    from course_bench import main

    path = tmp_path / "fb.jsonl"
    run_bench(feedback_arms(1), [HE0], Sampler({"HumanEval/0": NEVER}), path, progress=False)
    assert main(["--report", str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        "1 problems, 1 replicate(s)" in out
        and "primary: does feedback:checks beat feedback:blind?" in out
    )


def test_the_command_makes_what_the_arms_share_alone_then_runs_the_arms_and_reports(
    tmp_path, monkeypatch, capsys
):
    """`python -m course_runtime.bench --strategies feedback`: first every problem's evidence, first draft and
    critique, one request at a time and no sample (into no results file), then every arm at the command's
    concurrency, the shared calls answered by the cache; then the stated analysis."""
    from types import SimpleNamespace

    import course_bench as bench

    model = Sampler(
        {"HumanEval/0": NEVER, "HumanEval/1": BROKEN.replace("has_close_elements", "x")}
    )
    conn = SimpleNamespace(chat=model, model="scripted", workers=2)
    passes, real = [], bench.run_bench

    def run_bench(strategies, tasks, chat, path, **kw):
        passes.append(([s.name for s in strategies], [t.id for t in tasks], kw["concurrency"]))
        return real(strategies, tasks, chat, path, progress=False, **kw)

    monkeypatch.setattr(bench, "run_bench", run_bench)
    path = tmp_path / "fb.jsonl"
    argv = ["--tasks", "humaneval", "--limit", "2", "--strategies", "feedback", "--replicates", "1"]
    assert bench.main([*argv, "--concurrency", "2", "--out", str(path)], lambda: conn) == 0
    problems = ["HumanEval/0", "HumanEval/1"]
    assert passes == [
        (["feedback:shared"], problems, 1),
        ([a.name for a in feedback_arms(1)], problems, 2),
    ]
    first = model.calls[: model.calls.index(next(c for c in model.calls if c[1] not in (None, 42)))]
    assert sorted(role for role, *_ in first) == ["critic", "critic", "generator", "generator"]
    assert sum(role == "critic" for role, *_ in model.calls) == 2  # never asked again by the arms
    assert {(r["strategy"], r["task_id"]) for r in load_rows(path)} == {
        (a, t) for a in fx.ARMS for t in problems
    }
    out = capsys.readouterr().out
    assert "2 problems, 1 replicate(s)" in out and "not yet run by every arm" not in out


def test_the_report_counts_the_problems_whose_evidence_could_not_run(tmp_path, capsys):
    from course_bench import main

    path = tmp_path / "fb.jsonl"
    no_asserts = Sampler({"HumanEval/0": NEVER, FACT.id: FACT_WRONG}, tests="I cannot test this.")
    run_bench(feedback_arms(1), [HE0, FACT], no_asserts, path, progress=False)
    assert main(["--report", str(path)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith(
        "1 problems' first draft failed its evidence (only there can the arms differ); "
        "1 had no evidence that could run: their first draft stands in every arm"
    )
    run_bench(feedback_arms(1), [HE0, FACT], Sampler({"HumanEval/0": NEVER, FACT.id: FACT_WRONG}),
              tmp_path / "own.jsonl", progress=False)  # fmt: skip
    assert main(["--report", str(tmp_path / "own.jsonl")]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith(
        "2 problems' first draft failed its evidence (only there can the arms differ)"
    )


def test_the_report_of_a_recording_under_way_names_the_problems_it_leaves_out(tmp_path, capsys):
    from course_bench import main

    path, tasks = tmp_path / "fb.jsonl", [HE0, get_task("HumanEval/2")]
    model = CachedChat(Sampler({"HumanEval/0": NEVER, "HumanEval/2": TRUNCATE}), seeded=True)
    run_bench(feedback_arms(1), tasks[1:], model, path, progress=False)
    run_bench(feedback_arms(1)[:2], tasks[:1], model, path, progress=False)  # two arms of /0
    assert main(["--report", str(path)]) == 0
    out = capsys.readouterr().out
    assert "1 problems, 1 replicate(s)" in out
    assert "not yet run by every arm, so left out: 1 problem(s), HumanEval/0" in out


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
        [row(fx.CHECKS, "a", p, r) for r, p in enumerate((True, True, False))]
        + [row(fx.BLIND, "a", p, r) for r, p in enumerate((False, False, False))]
        + [row(fx.CHECKS, "b", True), row(fx.CHECKS, "b", True, 1), row(fx.CHECKS, "b", True, 2)]
        + [row(fx.BLIND, "b", True), row(fx.BLIND, "b", True, 1), row(fx.BLIND, "b", True, 2)]
    )
    c = fx.compare(table, fx.CHECKS, fx.BLIND)
    assert c["effect"] == pytest.approx((2 / 3) / 2) and (c["better"], c["worse"], c["same"]) == (
        1,
        0,
        1,
    )
    assert c["p"] == pytest.approx(1.0)  # one problem can never be significant


def test_failure_kinds_and_the_failed_checks_read_from_a_trace():
    failed = [("assert f() == 1", "raised ZeroDivisionError: x")]
    trace = (
        "Tests passed: none\n\nTests failed:\nassert f() == 1 # output: raised ZeroDivisionError: x"
    )
    assert fx.failed_checks(trace) == failed and fx.failed_checks("Tests failed: none") == []
    assert fx.failure_kind("def f(:\n", [("assert f() == 1", "not run")]) == "syntax"
    assert fx.failure_kind("", [("(no code)", "no code")]) == "syntax"
    assert fx.failure_kind("def f():\n    return 1/0\n", failed) == "exception"
    assert fx.failure_kind("def f():\n    return 2\n", [("assert f() == 1", "2")]) == "assertion"


def test_the_curve_replays_each_arm_over_j_from_its_runs(tmp_path):
    path = tmp_path / "fb.jsonl"
    run_bench(
        feedback_arms(1),
        [HE0],
        CachedChat(Sampler({"HumanEval/0": NEVER}), seeded=True),
        path,
        progress=False,
    )
    table, _ = fx.rows(path)
    stats = fx.arm_stats(table)
    for arm in fx.ARMS:
        points = fx.curve(table, arm)
        assert (
            points[0][1] == 0.0 and points[-1][1] == stats[arm]["pass_rate"] == 1.0
        )  # NEVER fails, GOOD passes
        assert points[0][2] == stats["one-shot"]["tokens_per_task"]  # the first draft alone
        assert points[-1][2] == pytest.approx(stats[arm]["tokens_per_task"])
    assert (
        stats[fx.CRITIQUE]["tokens_per_task"] == stats[fx.BLIND]["tokens_per_task"] + 70
    )  # the critique's call
    assert stats[fx.CHECKS]["repaired"] == 1 and stats[fx.CHECKS]["first_code_returned"] == 0
    assert fair_test.by_failure(table) == {
        "assertion": {"problems": 1, "first_passed": 0, **dict.fromkeys(fx.ARMS, 1.0)}
    }


def test_the_curve_charges_the_evidence_only_once_a_sample_is_drawn():
    chat = ScriptedChat({"test_writer": [OWN], "generator": [FACT_WRONG, FACT_RIGHT]})
    run = feedback_arm(fx.CHECKS).run(FACT, chat)
    writer, first = run.steps[0], run.steps[1]
    assert writer.role == "test_writer" and first.role == "generator"
    table = [
        {
            "strategy": fx.CHECKS,
            "task_id": FACT.id,
            "replicate": 0,
            "passed_first": False,
            "run": run.to_dict(),
            "drafts": {"1": False, "3": True},
            "leaks": [],
        }
    ]
    (j0, rate0, tokens0), (j1, rate1, tokens1), *_ = fx.curve(table, fx.CHECKS)
    assert (rate0, tokens0) == (0.0, first.prompt_tokens + first.completion_tokens)
    assert (rate1, tokens1) == (1.0, run.tokens)


RESULTS = Path(__file__).resolve().parents[1] / "results" / "06_feedback_164.jsonl"


def test_the_committed_recording_gives_every_arm_of_a_problem_the_same_first_steps():
    """Every line is a current run of a fair-test arm (its configuration is today's), the problems are
    HumanEval's in order, every arm and replicate of a problem begins with the same steps byte for byte
    (the evidence, the one first draft and its check), and no hidden test line reached a prompt."""
    lines = load_rows(RESULTS)
    assert len(current_rows(RESULTS, feedback_arms(2))) == len(lines) == 164 * 4 * 2
    order = [t.id for t in humaneval_tasks()]
    problems = list(dict.fromkeys(r["task_id"] for r in lines))
    assert problems == order
    first_steps: dict[str, list] = {}
    for r in lines:
        steps = r["run"]["steps"]
        n = next(i for i, s in enumerate(steps) if s["role"] == "generator") + 1
        n += n < len(steps) and steps[n]["role"] == "tests"
        shared = json.dumps(steps[:n], sort_keys=True)
        assert first_steps.setdefault(r["task_id"], shared) == shared, (r["strategy"], r["task_id"])
        assert not r["leaks"]


def verdicts(spec):
    """Analysis rows from {(strategy, problem): [passed per replicate]} (only what the analysis reads)."""
    return [
        {"strategy": s, "task_id": t, "replicate": r, "run": {"passed": p}}
        for (s, t), ps in spec.items()
        for r, p in enumerate(ps)
    ]


def test_between_sizes_pairs_each_problems_checks_minus_blind_across_the_two_recordings():
    C, B = fx.CHECKS, fx.BLIND
    small = verdicts(
        {
            (C, "p1"): [1, 1],
            (B, "p1"): [0, 0],
            (C, "p2"): [0, 0],
            (B, "p2"): [0, 0],
            (C, "p3"): [1, 0],
            (B, "p3"): [1, 1],
        }
    )  # fmt: skip  d: +1, 0, -1/2
    large = verdicts(
        {
            (C, "p1"): [1, 1],
            (B, "p1"): [1, 1],
            (C, "p2"): [1, 1],
            (B, "p2"): [0, 1],
            (C, "p3"): [0, 0],
            (B, "p3"): [1, 0],
            (C, "p4"): [1, 1],
            (B, "p4"): [0, 0],
        }
    )  # fmt: skip  d: 0, +1/2, -1/2, and p4 the small recording lacks
    e = fx.between(small, large)
    assert e["problems"] == 3 and (e["better"], e["worse"], e["same"]) == (1, 1, 1)
    assert e["effect"] == pytest.approx((1 - 0.5 + 0) / 3)
    assert e["p"] == pytest.approx(brute_p([1, -0.5]))
    assert e["interval"][0] <= e["effect"] <= e["interval"][1]
    assert fx.between(large, small)["effect"] == pytest.approx(-e["effect"])
    assert fx.between(small, small)["effect"] == 0 and fx.between(small, small)["p"] == 1.0


def test_the_evidence_split_counts_each_failed_first_draft_by_its_evidence_and_its_truth():
    def first(t, source, failure, passed_first):
        return {"strategy": fx.ONE_SHOT, "task_id": t, "replicate": 0, "run": {"passed": passed_first},
                "source": source, "failure": failure, "passed_first": passed_first}  # fmt: skip

    table = [
        first("e_wrong", "examples", "assertion", False),
        first("own_right", "self-tests", "assertion", True),
        first("own_wrong", "self-tests", "exception", False),
        first("passed", "examples", None, True),  # its first draft passed its evidence: in no group
    ]
    table += verdicts(
        {
            (arm, t): [1, 0]
            for arm in fx.ARMS
            for t in ("e_wrong", "own_right", "own_wrong", "passed")
        }
    )
    table = [r for r in table if not (r["strategy"] == fx.CHECKS and r["task_id"] == "own_wrong")]
    table += verdicts({(fx.CHECKS, "own_wrong"): [1, 1]})
    split = fair_test.evidence_split(table)
    assert {g: (v["problems"], v["correct"]) for g, v in split.items()} == {
        "examples": (1, 0), "own tests": (2, 1), "really wrong": (2, 0), "wrongly rejected": (1, 1)
    }  # fmt: skip
    assert split["really wrong"][fx.CHECKS] == 1.5 and split["really wrong"][fx.BLIND] == 1.0
    assert split["own tests"][fx.CHECKS] == 1.5 and split["examples"][fx.CRITIQUE] == 0.5


def test_the_table_of_sizes_prints_each_sizes_figures_and_the_second_minus_the_first():
    import copy

    large, _ = fx.rows(Path(__file__).parents[1] / "results" / "06_feedback_164.jsonl", 2)
    small = copy.deepcopy(large)
    for row in small:  # at the made-up size, every checks sample passes
        if row["strategy"] == fx.CHECKS:
            row["run"]["passed"] = True
    text = fair_test.format_sizes({"1.5B": large, "tiny": small})
    lines = text.splitlines()
    assert lines[0].split() == ["1.5B", "tiny"]
    checks = next(x for x in lines if x.startswith(fx.CHECKS + " "))
    assert checks.split()[1] == "78.0%" and checks.split()[6] == "100.0%"
    ours = (
        fx.compare(small, fx.CHECKS, fx.BLIND)["effect"]
        - fx.compare(large, fx.CHECKS, fx.BLIND)["effect"]
    )
    assert ours > 0 and f"at tiny minus at 1.5B, per problem: {ours:+.1%}" in lines[-1]
    assert fx.between(small, large)["effect"] == pytest.approx(ours)
