"""The resumable runner (reflect.evaluation.runner) on fake strategies: it resumes where it
stopped without redoing finished runs, ignores a cut-off line, re-runs a changed strategy,
never has more runs in flight than its concurrency, and a report reads only the current
setup's latest line of each run."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from reflect.evaluation.runner import current_rows, load_rows, run_bench
from reflect.records import Run, Stop
from reflect.tasks.task import course_tasks
from tests.in_flight import InFlight

TASKS = course_tasks()[:3]


@dataclass
class Fake:
    """A strategy that records each task it ran and can fail on one (an interruption)."""

    name: str
    setting: int = 0
    fail_on: str | None = field(default=None, repr=False)  # not part of the setup
    ran: list = field(default_factory=list, repr=False)

    def run(self, task, chat) -> Run:
        if task.id == self.fail_on:
            raise KeyboardInterrupt("stopped by hand")
        self.ran.append(task.id)
        return Run(
            strategy=self.name,
            task_id=task.id,
            final_code=f"# {self.name} {self.setting}",
            stop=Stop.ACCEPTED,
            passed=True,
        )


def test_an_interrupted_run_resumes_without_redoing_finished_work(tmp_path):
    out = tmp_path / "r.jsonl"
    first = [Fake("a", fail_on=TASKS[1].id), Fake("b")]
    with pytest.raises(KeyboardInterrupt):
        run_bench(first, TASKS, chat=None, path=out, progress=False)
    assert [(r["strategy"], r["task_id"]) for r in load_rows(out)] == [
        ("a", TASKS[0].id),
        ("b", TASKS[0].id),
    ]
    again = [Fake("a"), Fake("b")]
    runs = run_bench(again, TASKS, chat=None, path=out, progress=False)
    assert again[0].ran == [t.id for t in TASKS[1:]] and again[1].ran == [t.id for t in TASKS[1:]]
    assert [(r.strategy, r.task_id) for r in runs] == [(s, t.id) for s in "ab" for t in TASKS]
    assert len(load_rows(out)) == 6
    assert (
        run_bench(again, TASKS, chat=None, path=out, progress=False) == runs
        and len(again[0].ran) == 2
    )


def test_a_results_file_is_resumed_only_on_the_model_that_recorded_it(tmp_path):
    out = tmp_path / "r.jsonl"
    run_bench([Fake("a")], TASKS[:1], chat=None, path=out, progress=False, meta={"model": "m-1.5b"})
    before = out.read_text()
    other = Fake("a")
    with pytest.raises(ValueError, match="another model \\(m-1.5b\\).*m-0.5b.*--out"):
        run_bench([other], TASKS, chat=None, path=out, progress=False, meta={"model": "m-0.5b"})
    assert other.ran == [] and out.read_text() == before
    same = Fake("a")
    run_bench([same], TASKS, chat=None, path=out, progress=False, meta={"model": "m-1.5b"})
    assert same.ran == [t.id for t in TASKS[1:]]


def test_a_cut_off_last_line_is_skipped_and_run_again(tmp_path):
    out = tmp_path / "r.jsonl"
    run_bench([Fake("a")], TASKS, chat=None, path=out, progress=False)
    text = out.read_text()
    out.write_text(text[: len(text) - 20])  # a kill in the middle of writing the last line
    with pytest.warns(UserWarning, match="incomplete"):
        assert len(load_rows(out)) == 2
    redo = Fake("a")
    with pytest.warns(UserWarning):
        run_bench([redo], TASKS, chat=None, path=out, progress=False)
    assert redo.ran == [TASKS[2].id]


def test_a_changed_strategy_is_run_again_and_names_must_be_unique(tmp_path):
    out = tmp_path / "r.jsonl"
    run_bench([Fake("a", setting=1)], TASKS, chat=None, path=out, progress=False)
    changed = Fake("a", setting=2)
    runs = run_bench([changed], TASKS, chat=None, path=out, progress=False)
    assert changed.ran == [t.id for t in TASKS] and {r.final_code for r in runs} == {"# a 2"}
    assert json.loads(out.read_text().splitlines()[0])["config"] == {
        "type": "Fake",
        "name": "a",
        "setting": 1,
    }
    with pytest.raises(ValueError, match="unique"):
        run_bench([Fake("a"), Fake("a", setting=3)], TASKS, chat=None, path=out, progress=False)


def test_a_report_reads_the_current_setups_latest_line_of_each_run(tmp_path):
    out, (t0, t1, t2) = tmp_path / "r.jsonl", [t.id for t in TASKS]
    run_bench([Fake("a", setting=1), Fake("b")], TASKS[:2], chat=None, path=out, progress=False)
    run_bench([Fake("a", setting=2)], [TASKS[2], TASKS[0]], chat=None, path=out, progress=False)
    lines = out.read_text().splitlines()
    out.write_text(
        "\n".join([*lines, lines[0].replace("# a 1", "# a 1, again")]) + "\n"
    )  # a later line, same setup

    def seen(rows):
        return [(r["strategy"], r["task_id"], r["run"]["final_code"]) for r in rows]

    assert seen(
        current_rows(out, [Fake("a", setting=1), Fake("b")])
    ) == [  # the given setups; file's task order
        ("a", t0, "# a 1, again"),
        ("a", t1, "# a 1"),
        ("b", t0, "# b 0"),
        ("b", t1, "# b 0"),
    ]
    assert seen(current_rows(out, [Fake("a", setting=2)], [t2, t1, t0])) == [
        ("a", t2, "# a 2"),
        ("a", t0, "# a 2"),
    ]
    assert seen(current_rows(out, [Fake("b"), Fake("a", setting=2)], [t1])) == [("b", t1, "# b 0")]
    assert seen(current_rows(out)) == [
        ("a", t0, "# a 1, again"),
        ("a", t1, "# a 1"),  # a's last line is setting 1
        ("b", t0, "# b 0"),
        ("b", t1, "# b 0"),
    ]
    out.write_text("\n".join(lines) + "\n")  # without it, a's last line is setting 2
    assert seen(current_rows(out))[:2] == [("a", t0, "# a 2"), ("a", t2, "# a 2")]
    assert current_rows(tmp_path / "none.jsonl") == []


def test_no_more_runs_in_flight_than_the_concurrency(tmp_path):
    flight = InFlight()

    @dataclass
    class Slow(Fake):
        def run(self, task, chat):
            with flight.inside():
                return super().run(task, chat)

    tasks = course_tasks()[:8]
    runs = run_bench(
        [Slow("s")], tasks, chat=None, path=tmp_path / "r.jsonl", concurrency=3, progress=False
    )
    assert flight.peak == 3 and [r.task_id for r in runs] == [t.id for t in tasks]
