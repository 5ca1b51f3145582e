"""`python -m reflect.bench`: the course's strategies over a task set, resumably, and the report.

    python -m reflect.bench --tasks course                           # the 18 course tasks
    python -m reflect.bench --tasks humaneval --limit 80 --concurrency 2
    python -m reflect.bench --tasks humaneval --limit 80 --seed 7     # a random sample of 80, seed 7
    python -m reflect.bench --report results/06_humaneval.jsonl       # the report only, no model

Strategies (`--strategies`, default lesson 06's seven): one-shot (lesson 01); resample (k fresh samples
chosen by the agent's own tests: the rival at equal cost); maker-checker (02); scored (03's
JSON critic); evidence:examples and evidence:self-tests (03's loop, the critic replaced by the
statement's examples or the agent's own tests in the sandbox); reflexion (05, reflections
mode). Each is one line of `reflect.strategies.catalog`, which also holds examples:2 (the
examples loop, at most 2 drafts); a line added there is a new strategy here. Any backend: COURSE_BACKEND=local (default), openai, or replay, and OPENAI_BASE_URL for
any OpenAI-compatible server (llama.cpp's llama-server, vLLM, Ollama, LM Studio).

One JSON line per (strategy, task) as each finishes (reflect.evaluation.runner.run_bench):
stop it at any time and the same command resumes. Every line records each draft's hidden-test
verdict and any hidden test line found in a prompt (there must be none).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from ..evaluation import report
from ..evaluation.runner import current_rows, run_bench
from ..model.cache import CachedChat
from ..model.config import repo_root
from ..strategies.catalog import LESSON_06, catalog, strategies
from ..tasks.task import Task, course_tasks, humaneval_tasks

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


def format_report(rows: list[dict], resample: str = "resample") -> str:
    """The report as text: the summary table, the paired test against one-shot, resampling over
    k, equal budget, the judges."""
    lines = [
        f"{'strategy':<22}{'pass':>9}{'tokens/task':>13}{'x one-shot':>12}{'drafts':>8}{'latency s':>11}"
        f"{'made worse':>12}{'leaks':>7}"
    ]
    for s in report.summary(rows):
        x = f"{s['x_baseline']:.1f}" if s["x_baseline"] else "-"
        lines.append(
            f"{s['strategy']:<22}{s['passed']:>4}/{s['tasks']:<4}{s['tokens_per_task']:>13,.0f}{x:>12}"
            f"{s['drafts']:>8.1f}{s['latency_s']:>11.1f}{s['made_worse']:>12}{s['leaks']:>7}"
        )
    pairs = [
        (name, report.paired(rows, name)) for name in report.by_strategy(rows) if name != "one-shot"
    ]
    if pairs and "one-shot" in report.by_strategy(rows):
        lines += ["", "against one-shot on the same tasks (wins, losses, exact sign test):"]
        lines += [
            f"  {name:<22}{p['wins']:>3} won {p['losses']:>3} lost   p = {p['p']:.2f}"
            for name, p in pairs
        ]
    between = [p for p in report.paired_all(rows) if "one-shot" not in (p["a"], p["b"])]
    if between:
        lines += [
            "",
            f"between the other strategies ({len(between)} pairs; lowest p first, up to 3):",
        ]
        lines += [
            f"  {p['a']} vs {p['b']}: {p['wins']} won {p['losses']} lost   p = {p['p']:.3f}"
            for p in between[:3]
        ]
    curve = report.resample_curve(rows, resample)
    if curve:
        lines += ["", f"{resample}, choosing among the first j samples:"]
        lines += [
            f"  j={j}: pass {rate:.0%}, {tokens:,.0f} tokens/task" for j, rate, tokens in curve
        ]
        at_k = report.pass_at_k_table(rows, resample)
        counted = report.pass_at_k_tasks(rows, resample)
        lines.append(
            "  unbiased pass@k over its samples: "
            + ", ".join(f"pass@{k} {v:.0%} ({counted[k]} tasks)" for k, v in at_k.items())
        )
    budget = report.equal_budget(rows, resample)
    if budget:
        lines += ["", f"each loop beside {resample} at the same tokens per task:"]
    for e in budget:
        if e["j"] is None:
            lines.append(
                f"  {e['strategy']}: {e['pass_rate']:.0%} at {e['tokens_per_task']:,.0f} tokens; "
                f"one sample already costs more"
            )
        else:
            lines.append(
                f"  {e['strategy']}: {e['pass_rate']:.0%} at {e['tokens_per_task']:,.0f} tokens vs "
                f"{resample} j={e['j']}: {e['resample_pass_rate']:.0%} at {e['resample_tokens']:,.0f}"
            )
    judged = report.confusion(rows)
    if judged:
        lines += [
            "",
            "judges against the hidden tests (accepted right/wrong, rejected right/wrong):",
        ]
        lines += [
            f"  {s:<22}{role:<10} {c['accepted_right']:>4} {c['accepted_wrong']:>4} {c['rejected_right']:>4} "
            f"{c['rejected_wrong']:>4}"
            for (s, role), c in judged.items()
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """The command line (see the module docstring)."""
    ap = argparse.ArgumentParser(
        prog="python -m reflect.bench",
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
        help="comma-separated (default: lesson 06's seven), from: " + ", ".join(catalog()),
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
        print(format_report(rows) if rows else f"{args.report}: no finished runs")
        return 0 if rows else 1
    chosen = strategies(
        tuple(n.strip() for n in args.strategies.split(",") if n.strip()), args.k, args.iterations
    )
    tasks = task_sample(args.tasks, args.limit, args.seed)
    out = args.out or repo_root() / "results" / f"bench_{args.tasks}.jsonl"
    from ..runtime.connect import connect

    conn = connect()
    workers = args.concurrency or conn.workers
    print(
        f"{len(chosen)} strategies x {len(tasks)} {args.tasks} tasks -> {out} ({workers} at a time)",
        file=sys.stderr,
    )
    start = time.perf_counter()
    run_bench(
        chosen,
        tasks,
        CachedChat(conn.chat, seeded=True),
        out,
        concurrency=workers,
        meta={
            "model": conn.model,
            "concurrency": workers,
            "tasks": args.tasks,
            "limit": args.limit,
            "seed": args.seed,
        },
    )
    print(f"finished in {time.perf_counter() - start:.0f} s (this call)", file=sys.stderr)
    print(format_report(current_rows(out, chosen, [t.id for t in tasks])))
    return 0
