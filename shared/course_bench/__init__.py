"""`python -m course_runtime.bench`: the course's strategies over a task set, resumably, and the report.

    python -m course_runtime.bench --tasks course                           # the 18 course tasks
    python -m course_runtime.bench --tasks humaneval --limit 80 --concurrency 2
    python -m course_runtime.bench --tasks humaneval --limit 80 --seed 7     # a random sample of 80, seed 7
    python -m course_runtime.bench --report results/06_humaneval.jsonl       # the report only, no model
    python -m course_runtime.bench --tasks humaneval --strategies feedback --replicates 2 --concurrency 2 \
        --out results/06_feedback_164.jsonl                           # lesson 06's fair test

Each strategy is one line of `course_bench.catalog`; `feedback` names lesson 06's fair test. One
JSON line per (strategy, task) as each finishes: stop it at any time and the same command resumes. What
the report holds: docs/package.md, "Comparing strategies".
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from reflect.evaluation import feedback, report
from reflect.evaluation.feedback import feedback_arm, feedback_arms
from reflect.evaluation.runner import current_rows, run_bench
from reflect.model.cache import CachedChat
from reflect.model.config import repo_root
from reflect.tasks.task import Task, course_tasks, humaneval_tasks

from . import analysis, fair_test
from .catalog import LESSON_06, catalog, strategies

STRATEGIES = LESSON_06  # the default set; every name `catalog` knows is accepted


def task_sample(source: str, limit: int | None = None, seed: int | None = None) -> list[Task]:
    """The tasks of `source` ("course" or "humaneval"): the first `limit`, or with `seed` a random
    sample of `limit` (kept in the source's order), so a stated sample is reproducible."""
    tasks = course_tasks() if source == "course" else humaneval_tasks()
    if limit is None or limit >= len(tasks):
        return tasks
    if seed is None:
        return tasks[:limit]
    chosen = set(random.Random(seed).sample(range(len(tasks)), limit))
    return [t for i, t in enumerate(tasks) if i in chosen]


def summary_table(rows: list[dict]) -> str:
    """One line per strategy: hidden-test passes, tokens per task (and as a multiple of one-shot's),
    calls, drafts, latency, runs it made worse, hidden-test leaks, provider errors."""
    lines = [
        f"{'strategy':<21}{'pass':>7}{'tokens/task':>13}{'x one-shot':>12}{'calls':>7}{'drafts':>8}"
        f"{'latency s':>11}{'made worse':>12}{'leaks':>7}{'errors':>8}"
    ]
    for s in report.summary(rows):
        errors = sum(
            r["run"]["stop"] == "provider_error" for r in rows if r["strategy"] == s["strategy"]
        )
        x = f"{s['x_baseline']:.1f}x" if s["x_baseline"] else "-"
        lines.append(
            f"{s['strategy']:<21}{s['passed']:>4}/{s['tasks']:<2}{s['tokens_per_task']:>13,.0f}{x:>12}"
            f"{s['calls']:>7.1f}{s['drafts']:>8.1f}{s['latency_s']:>11.1f}{s['made_worse']:>12}"
            f"{s['leaks']:>7}{errors:>8}"
        )
    return "\n".join(lines)


def paired_table(rows: list[dict], baseline: str = "one-shot") -> str:
    """Each strategy against `baseline` on the same tasks: wins, losses, ties, exact sign test."""
    lines = []
    for name in report.by_strategy(rows):
        if name != baseline:
            p = report.paired(rows, name, baseline)
            lines.append(
                f"{name:<21}wins {p['wins']:>2}  losses {p['losses']:>2}  ties {p['ties']:>3}  "
                f"p = {p['p']:.2f}"
            )
    return "\n".join(lines)


def _between_table(rows: list[dict], title: str, show: int = 3) -> str:
    """The paired tests between strategies other than one-shot, lowest p first (up to `show`), with
    how many tests there are in all and the Bonferroni threshold that number sets."""
    tested = analysis.paired_all(rows)  # every pair, one-shot's included
    pairs = [p for p in tested if "one-shot" not in (p["a"], p["b"])]
    lines = [
        f"{title}: {len(tested)} paired tests in all; Bonferroni's threshold for them is "
        f"0.05/{len(tested)} = {0.05 / len(tested):.4f}"
    ]
    lines += [
        f"  {p['a']:<20} vs {p['b']:<20}{p['wins']:>3} won {p['losses']:>3} lost   p = {p['p']:.3f}"
        for p in pairs[:show]
    ]
    return "\n".join(lines)


def _budget_table(rows: list[dict], resample: str = "resample") -> str:
    """Each loop beside `resample` at the same tokens per task (the most samples that fit)."""
    lines = []
    for e in analysis.equal_budget(rows, resample):
        line = f"{e['strategy']:<21}{e['pass_rate']:>5.0%} at {e['tokens_per_task']:>6,.0f} tokens"
        if e["j"] is None:
            lines.append(f"{line}   {resample}: one sample already costs more")
        else:
            lines.append(
                f"{line}   {resample} j={e['j']}: {e['resample_pass_rate']:>4.0%} at "
                f"{e['resample_tokens']:>6,.0f}"
            )
    return "\n".join(lines)


def _judges_table(rows: list[dict]) -> str:
    """Every judge in the runs against the hidden tests: accepted right/wrong, rejected right/wrong,
    precision (right among accepted) and missed (right drafts it rejected)."""
    lines = [
        f"{'judge':<32}{'accepted right/wrong':>22}{'rejected right/wrong':>22}"
        f"{'precision':>11}{'missed':>8}"
    ]
    for (strategy, role), c in analysis.confusion(rows).items():
        precision, missed = (
            f"{v:.0%}" if v is not None else "-" for v in analysis.precision_missed(c)
        )
        lines.append(
            f"{strategy + ' ' + role:<32}{c['accepted_right']:>11}/"
            f"{c['accepted_wrong']:<10}{c['rejected_right']:>11}/{c['rejected_wrong']:<10}"
            f"{precision:>11}{missed:>8}"
        )
    return "\n".join(lines)


def format_report(rows: list[dict], resample: str = "resample") -> str:
    """The report as text, the tables lesson 06 prints: the summary, the paired tests against
    one-shot and between the others, resampling over k, equal budget, the judges."""
    sections = [summary_table(rows)]
    if "one-shot" in report.by_strategy(rows) and len(report.by_strategy(rows)) > 1:
        sections.append(
            "against one-shot on the same tasks (exact sign test):\n" + paired_table(rows)
        )
    if any("one-shot" not in (p["a"], p["b"]) for p in analysis.paired_all(rows)):
        sections.append(_between_table(rows, "between the other strategies"))
    curve = report.resample_curve(rows, resample)
    if curve:
        at_k = analysis.pass_at_k_table(rows, resample)
        counted = analysis.pass_at_k_tasks(rows, resample)
        sections.append(
            "\n".join(
                [f"{resample}, choosing among the first j samples:"]
                + [
                    f"  j={j}: pass {rate:.0%}, {tokens:,.0f} tokens/task"
                    for j, rate, tokens in curve
                ]
                + [
                    "  unbiased pass@k over its samples: "
                    + ", ".join(f"pass@{k} {v:.0%} ({counted[k]} tasks)" for k, v in at_k.items())
                ]
            )
        )
    if analysis.equal_budget(rows, resample):
        sections.append(
            f"each loop beside {resample} at the same tokens per task:\n"
            + _budget_table(rows, resample)
        )
    if analysis.confusion(rows):
        sections.append("judges against the hidden tests:\n" + _judges_table(rows))
    return "\n\n".join(sections)


def _fair_test_report(path: Path, replicates: int | None = None) -> None:
    """Lesson 06's fair test's report of a results file, and the problems it leaves out because some arm
    has not run them yet (a recording under way)."""
    table, R = feedback.rows(path, replicates)
    print(fair_test.format_report(table, R))
    left = feedback.incomplete(path, R)
    if left:
        print(
            f"not yet run by every arm, so left out: {len(left)} problem(s), {', '.join(left[:5])}"
        )


def main(argv: list[str] | None = None, connect: Callable[[], Any] | None = None) -> int:
    """The command line (see the module docstring); `connect` makes the model connection a run needs
    (`course_runtime.bench` passes the course's, `course_runtime.connect`)."""
    ap = argparse.ArgumentParser(
        prog="python -m course_runtime.bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("--tasks", choices=("course", "humaneval"), default="course")
    ap.add_argument("--limit", type=int, default=None, help="how many tasks (default: all)")
    ap.add_argument(
        "--seed",
        type=int,
        default=None,
        help="a random sample of --limit tasks (default: the first)",
    )
    ap.add_argument(
        "--strategies",
        default=",".join(STRATEGIES),
        help="comma-separated (default: lesson 06's seven), from: feedback (lesson 06's fair test), "
        + ", ".join(catalog()),
    )
    ap.add_argument(
        "--replicates", type=int, default=2, help="replicates of the fair test's arms (default 2)"
    )
    ap.add_argument(
        "--k", type=int, default=6, help="samples of the resample strategy (all drawn, for pass@k)"
    )
    ap.add_argument("--iterations", type=int, default=3, help="drafts of each loop")
    ap.add_argument(
        "--concurrency", type=int, default=None, help="requests at once (default: COURSE_WORKERS)"
    )
    ap.add_argument(
        "--out",
        type=Path,
        default=None,
        help="the results file (default: results/bench_<tasks>.jsonl)",
    )
    ap.add_argument(
        "--report", type=Path, default=None, help="print the report of this file and run nothing"
    )
    args = ap.parse_args(argv)
    if args.report is not None:
        rows = current_rows(
            args.report
        )  # each strategy's latest setup, the latest line of each task
        if any(feedback.arm_of(r["strategy"])[0] in feedback.ARMS for r in rows):
            _fair_test_report(args.report)
            return 0
        print(format_report(rows) if rows else f"{args.report}: no finished runs")
        return 0 if rows else 1
    names = [n.strip() for n in args.strategies.split(",") if n.strip()]
    fair = "feedback" in names
    chosen = strategies(tuple(n for n in names if n != "feedback"), args.k, args.iterations)
    chosen += feedback_arms(args.replicates) if fair else []
    tasks = task_sample(args.tasks, args.limit, args.seed)
    out = args.out or repo_root() / "results" / f"bench_{args.tasks}.jsonl"
    if connect is None:
        raise SystemExit(
            "a benchmark run needs a model connection: run it as `python -m course_runtime.bench`."
        )
    conn = connect()
    workers = args.concurrency or conn.workers
    print(
        f"{len(chosen)} strategies x {len(tasks)} {args.tasks} tasks -> {out} ({workers} at a time)",
        file=sys.stderr,
    )
    start = time.perf_counter()
    chat = CachedChat(conn.chat, seeded=True)
    meta = {
        "model": conn.model,
        "concurrency": workers,
        "tasks": args.tasks,
        "limit": args.limit,
        "seed": args.seed,
    }
    if (
        fair
    ):  # every problem's evidence, first draft and critique made alone; the cache answers the arms
        shared = replace(feedback_arm(feedback.CRITIQUE), k=1, name="feedback:shared")
        with tempfile.TemporaryDirectory() as tmp:  # its runs are the arms' first steps, kept there
            run_bench([shared], tasks, chat, Path(tmp) / "shared.jsonl", concurrency=1)
    run_bench(
        chosen,
        tasks,
        chat,
        out,
        concurrency=workers,
        meta=meta,
    )
    print(f"finished in {time.perf_counter() - start:.0f} s (this call)", file=sys.stderr)
    if fair:
        _fair_test_report(out, args.replicates)
    else:
        print(format_report(current_rows(out, chosen, [t.id for t in tasks])))
    return 0
