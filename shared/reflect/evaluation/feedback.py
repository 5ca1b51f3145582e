"""Lesson 06's feedback experiment: the recording (resumable, in pieces) and the analysis stated before it.

The recording (`record`) writes one JSON line per finished piece to one file:
- a `start` line per problem (reflect.strategies.feedback.first_draft: the one first draft, its evidence,
  its check, the critique after a failure), made one request at a time, with the hidden tests' verdict on the
  first draft and any hidden test line found in a prompt;
- an `arm` line per (problem, arm, replicate) whose first draft failed its evidence: the arm's whole `Run`
  (the shared steps first), each draft's hidden-test verdict, and the leak check of every prompt.
Stop it at any moment: the same command skips every finished piece and does the rest, and a larger
`replicates` adds replicates to the file. A file written under another setup (`experiment_config`) is
refused, never mixed in.

The analysis (`analyse`), as stated before the run in `docs/feedback_experiment.md`:
- per problem and arm, the share of the R replicates whose returned code passes the hidden tests (a
  problem whose first draft passed its evidence has the first draft's verdict in every arm);
- primary: `feedback:checks` against `feedback:blind`, the mean over problems of the per-problem
  difference, its bootstrap 95% interval over problems, and an exact two-sided sign-flip permutation test;
- secondary, Holm-corrected as one family: checks+code vs checks, critique vs blind, each arm vs one-shot.
"""

from __future__ import annotations

import json
import math
import os
import random
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..judging.controller import best_index
from ..judging.hidden import hidden_lines_in_prompts, judge
from ..model.parallel import parallel_map
from ..records import Run
from ..strategies.feedback import (
    ARMS,
    BLIND,
    CHECKS,
    CHECKS_CODE,
    CRITIQUE,
    Start,
    after_failure,
    experiment_config,
    first_draft,
    one_shot_of,
)
from ..tasks.task import Task, get_task
from .runner import judge_drafts, seen_by

ONE_SHOT = "one-shot"
PRIMARY = (CHECKS, BLIND)
SECONDARY = ((CHECKS_CODE, CHECKS), (CRITIQUE, BLIND), *((arm, ONE_SHOT) for arm in ARMS))
BOOTSTRAP = 10_000  # resamples of the problems, seed 0


class SetupChanged(ValueError):
    """The results file was written under another setup of the experiment."""


def load(path: Path) -> tuple[dict[str, dict], dict[tuple[str, str, int], dict]]:
    """(start lines by task, arm lines by (task, arm, replicate)) of a results file, as far as the
    recording has gone; a line cut off by a kill is skipped (it is run again). A line of another setup
    raises `SetupChanged`."""
    starts: dict[str, dict] = {}
    arms: dict[tuple[str, str, int], dict] = {}
    if not Path(path).exists():
        return starts, arms
    config = experiment_config()
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            continue  # a line cut off by a kill
        if row.get("config") != config:
            raise SetupChanged(
                f"{path}:{n} was recorded under another setup of the experiment; record into a new "
                f"file (--out) instead of mixing the two"
            )
        if row["kind"] == "start":
            starts[row["task_id"]] = row
        else:
            arms[row["task_id"], row["arm"], row["replicate"]] = row
    return starts, arms


def _writer(path: Path, meta: dict | None) -> Callable[[dict], None]:
    """A function that appends one row, whole and flushed, to `path` (safe from several threads)."""
    config, lock = experiment_config(), threading.Lock()
    path.parent.mkdir(parents=True, exist_ok=True)

    def write(row: dict) -> None:
        line = json.dumps({**row, "config": config, "meta": meta or {}}, ensure_ascii=False) + "\n"
        with lock, path.open("a+b") as f:
            f.seek(0, os.SEEK_END)
            if f.tell():
                f.seek(-1, os.SEEK_END)
                if (
                    f.read(1) != b"\n"
                ):  # a line cut off by a kill: end it, so it stays alone and is skipped
                    f.write(b"\n")
            f.write(line.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())

    return write


def record_starts(
    tasks: Iterable[Task],
    chat: Callable,
    path: Path,
    progress: bool = True,
    meta: dict | None = None,
) -> dict[str, Start]:
    """Every problem's start (`first_draft`) not yet in `path`, one request at a time (a batched
    request can change a temperature-0 reply); every start in the file for `tasks`, by task id."""
    tasks, path = list(tasks), Path(path)
    starts, _ = load(path)
    write = _writer(path, meta)

    def start_of(task: Task) -> None:
        prompts: list[str] = []
        replies: list[str] = []
        t0 = time.perf_counter()
        start = first_draft(task, seen_by(chat, prompts, replies))
        row = {
            "kind": "start",
            "task_id": task.id,
            "start": start.to_dict(),
            "wall_s": time.perf_counter() - t0,
            "passed": judge(task, start.code).passed,
            "leaks": hidden_lines_in_prompts(task, prompts, replies),
        }
        write(row)
        starts[task.id] = row

    parallel_map(
        start_of,
        [t for t in tasks if t.id not in starts],
        workers=1,
        desc="first drafts",
        progress=progress,
    )
    return {t.id: Start.from_dict(starts[t.id]["start"]) for t in tasks}


def arm_jobs(tasks: Iterable[Task], path: Path, replicates: int) -> list[tuple[Task, str, int]]:
    """The (problem, arm, replicate) runs still to record, replicate by replicate, every arm of a problem
    together: after a failed first draft only (the starts must be recorded)."""
    return _jobs(list(tasks), *load(Path(path)), replicates)


def _jobs(
    tasks: list[Task], starts: dict[str, dict], done: dict, replicates: int
) -> list[tuple[Task, str, int]]:
    if replicates < 1:
        raise ValueError(f"replicates must be at least 1, got {replicates}")
    return [
        (task, arm, r)
        for r in range(replicates)
        for task in tasks
        for arm in ARMS
        if Start.from_dict(starts[task.id]["start"]).needs_samples and (task.id, arm, r) not in done
    ]


def record_arms(
    tasks: Iterable[Task],
    chat: Callable,
    path: Path,
    replicates: int,
    concurrency: int = 2,
    progress: bool = True,
    meta: dict | None = None,
) -> None:
    """Every arm and replicate after a failed first draft not yet in `path`, `concurrency` at a time."""
    tasks, path = list(tasks), Path(path)
    starts, done = load(path)
    jobs = _jobs(tasks, starts, done, replicates)
    write = _writer(path, meta)

    def arm_of(job: tuple[Task, str, int]) -> None:
        task, arm, r = job
        start = Start.from_dict(starts[task.id]["start"])
        prompts: list[str] = []
        replies: list[str] = [s.reply for s in (*start.steps, *start.critique_steps)]
        t0 = time.perf_counter()
        run = after_failure(task, start, arm, r, seen_by(chat, prompts, replies))
        run = replace(
            run, wall_s=time.perf_counter() - t0, passed=judge(task, run.final_code).passed
        )
        write(
            {
                "kind": "arm",
                "task_id": task.id,
                "arm": arm,
                "replicate": r,
                "run": run.to_dict(),
                "drafts": judge_drafts(task, run),
                "leaks": sorted(
                    set(starts[task.id]["leaks"])
                    | set(hidden_lines_in_prompts(task, prompts, replies))
                ),
            }
        )

    parallel_map(
        arm_of,
        jobs,
        workers=concurrency,
        desc="samples after a failed first draft",
        progress=progress,
    )


def record(
    tasks: Iterable[Task],
    chat: Callable,
    path: Path,
    replicates: int,
    concurrency: int = 2,
    progress: bool = True,
    meta: dict | None = None,
) -> None:
    """The whole experiment on `tasks` into `path`: the starts, then the arms (see the module docstring)."""
    tasks = list(tasks)
    record_starts(tasks, chat, path, progress, meta)
    record_arms(tasks, chat, path, replicates, concurrency, progress, meta)


def rows(path: Path, replicates: int | None = None) -> tuple[list[dict[str, Any]], int]:
    """The runs of a results file as bench rows (`strategy`, `task_id`, `replicate`, `run`, `drafts`,
    `leaks`: the shape `reflect.evaluation.report` reads), and R: `replicates`, or fewer if no problem has
    that many in full (every arm in replicates 0 to R - 1). A problem whose first draft failed its evidence
    is included only with all arms in all R replicates (`incomplete` counts the others while a recording
    is under way). One-shot's row is the shared first draft; an arm on a problem whose first draft passed
    its evidence (or had none) is that draft, made once, in every replicate."""
    starts, arms = load(path)
    if not starts:
        raise ValueError(f"{path}: no first draft recorded yet")
    failed = [t for t, row in starts.items() if Start.from_dict(row["start"]).needs_samples]
    most = max((complete_replicates(arms, t) for t in failed), default=replicates or 1)
    R = min(most, replicates) if replicates else most
    if R < 1:
        raise ValueError(
            f"{path}: no problem whose first draft failed has all arms in a replicate yet"
        )
    out: list[dict[str, Any]] = []
    for tid, row in starts.items():
        start = Start.from_dict(row["start"])
        if start.needs_samples and complete_replicates(arms, tid) < R:
            continue
        common = {
            "task_id": tid,
            "passed_first": row["passed"],
            "source": start.source,
            "failure": failure_kind(start) if start.needs_samples else None,
        }
        out.append(
            {
                "strategy": ONE_SHOT,
                **common,
                "replicate": 0,
                "drafts": {"0": row["passed"]},
                "run": {**one_shot_of(start).to_dict(), "passed": row["passed"]},
                "leaks": row["leaks"],
            }
        )
        for arm in ARMS:
            for r in range(R):
                if start.needs_samples:
                    line = arms[tid, arm, r]
                    out.append(
                        {
                            "strategy": arm,
                            **common,
                            "replicate": r,
                            "run": line["run"],
                            "drafts": line["drafts"],
                            "leaks": line["leaks"],
                        }
                    )
                else:
                    run = after_failure(get_task(tid), start, arm, r, _no_call)
                    index = next(s.index for s in run.steps if s.role == "generator")
                    out.append(
                        {
                            "strategy": arm,
                            **common,
                            "replicate": r,
                            "run": {**run.to_dict(), "passed": row["passed"]},
                            "drafts": {str(index): row["passed"]},
                            "leaks": row["leaks"],
                        }
                    )
    return out, R


def incomplete(path: Path, replicates: int) -> list[str]:
    """The problems whose first draft failed its evidence and that lack an arm in one of `replicates`."""
    starts, arms = load(path)
    return [
        t
        for t, row in starts.items()
        if Start.from_dict(row["start"]).needs_samples and complete_replicates(arms, t) < replicates
    ]


def complete_replicates(arms: dict[tuple[str, str, int], dict], task_id: str) -> int:
    """How many replicates, 0, 1, ... in order, a problem has with every arm recorded."""
    r = 0
    while all((task_id, a, r) in arms for a in ARMS):
        r += 1
    return r


def _no_call(*args, **kwargs):
    raise AssertionError("a problem whose first draft passed its evidence makes no call after it")


# --- the analysis ------------------------------------------------------------------------------------


def shares(table: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """{strategy: {task: share of its replicates whose returned code passes the hidden tests}}."""
    count: dict[str, dict[str, list[int]]] = {}
    for row in table:
        cell = count.setdefault(row["strategy"], {}).setdefault(row["task_id"], [0, 0])
        cell[0] += bool(row["run"]["passed"])
        cell[1] += 1
    return {s: {t: p / n for t, (p, n) in by_task.items()} for s, by_task in count.items()}


def differences(table: list[dict[str, Any]], a: str, b: str) -> list[float]:
    """Per problem, a's share minus b's (the problems both have, in a's order)."""
    s = shares(table)
    return [s[a][t] - s[b][t] for t in s[a] if t in s[b]]


def sign_flip_p(diffs: Sequence[float], resolution: int = 60) -> float:
    """The exact two-sided p-value of a paired permutation test of mean zero: under the null each
    problem's difference is as likely negated, so the 2^n sign patterns are equally likely; p is the
    share whose |sum| is at least the observed one. Differences are counted in units of 1/`resolution`
    (a share of R replicates is exact for R dividing 60: 1 to 6) by dynamic programming, not by listing."""
    ints = [round(abs(d) * resolution) for d in diffs]
    if any(abs(v - abs(d) * resolution) > 1e-6 for v, d in zip(ints, diffs, strict=True)):
        raise ValueError(f"differences must be multiples of 1/{resolution}: {list(diffs)}")
    ints = [v for v in ints if v]
    observed = abs(round(sum(d * resolution for d in diffs)))
    ways: dict[int, int] = {0: 1}
    for v in ints:
        nxt: dict[int, int] = {}
        for s, n in ways.items():
            nxt[s + v] = nxt.get(s + v, 0) + n
            nxt[s - v] = nxt.get(s - v, 0) + n
        ways = nxt
    extreme = sum(n for s, n in ways.items() if abs(s) >= observed)
    return extreme / 2 ** len(ints)


def bootstrap_interval(
    diffs: Sequence[float], n: int = BOOTSTRAP, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """A percentile bootstrap interval of the mean difference, resampling problems with replacement."""
    if not diffs:
        return (0.0, 0.0)
    rng = random.Random(seed)
    k = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=k)) / k for _ in range(n))
    lo, hi = (1 - level) / 2, 1 - (1 - level) / 2
    return means[int(lo * n)], means[min(n - 1, math.ceil(hi * n) - 1)]


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given: the family's error rate stays at the
    level for any number of tests, with more power than Bonferroni's."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted = [0.0] * len(pvalues)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def compare(table: list[dict[str, Any]], a: str, b: str) -> dict[str, Any]:
    """a against b over problems: the mean difference of the shares, its interval, the permutation p,
    and how many problems a did better on, worse on, the same."""
    d = differences(table, a, b)
    return {
        "a": a,
        "b": b,
        "effect": sum(d) / len(d) if d else 0.0,
        "interval": bootstrap_interval(d),
        "p": sign_flip_p(d),
        "better": sum(x > 0 for x in d),
        "worse": sum(x < 0 for x in d),
        "same": sum(x == 0 for x in d),
        "problems": len(d),
    }


def smallest_detectable(
    problems: int, replicates: int = 1, alpha: float = 0.05
) -> tuple[int, float]:
    """The fewest problems that, all one way by one replicate of `replicates` (a difference of 1/R, the
    rest 0), reach p < alpha in the primary test, and that as a difference in pass rate over `problems`.
    The sign-flip test does not depend on the size of the differences, only on their signs' pattern, so
    the count is the same for every R and the difference shrinks as 1/R."""
    for k in range(1, problems + 1):
        if sign_flip_p([1.0 / replicates] * k) < alpha:
            return k, k / (replicates * problems)
    return problems + 1, float("inf")


def failure_kind(start: Start) -> str:
    """How the first draft failed its evidence: "syntax" (no code, or code that does not parse or
    load), "exception" (an assert raised, or timed out), or "assertion" (a wrong value)."""
    from ..records import parse_python

    try:
        parse_python(start.code)
    except SyntaxError:
        return "syntax"
    actual = [a for _, a in start.failed]
    if not start.code.strip() or all(a in ("not run", "no code") for a in actual):
        return "syntax"
    if any(
        a.startswith("raised ") or a == "timed out" or a.startswith("process ended") for a in actual
    ):
        return "exception"
    return "assertion"


def analyse(table: list[dict[str, Any]]) -> dict[str, Any]:
    """The stated analysis of the rows `rows` returns (see the module docstring)."""
    primary = compare(table, *PRIMARY)
    secondary = [compare(table, a, b) for a, b in SECONDARY]
    for test, adjusted in zip(secondary, holm([t["p"] for t in secondary]), strict=True):
        test["p_holm"] = adjusted
    return {"primary": primary, "secondary": secondary, "arms": arm_stats(table)}


def arm_stats(table: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per strategy: pass rate, tokens per task (every call counted), calls, and over the runs after a
    failed first draft: how many repaired (first draft failed the hidden tests, returned code passes),
    returned the first draft's code, or made it worse (first draft passed, returned code fails)."""
    out: dict[str, dict[str, Any]] = {}
    for name in (ONE_SHOT, *ARMS):
        mine = [r for r in table if r["strategy"] == name]
        if not mine:
            continue
        runs = [Run.from_dict(r["run"]) for r in mine]
        sampled = [
            (r, run)
            for r, run in zip(mine, runs, strict=True)
            if sum(s.role == "generator" for s in run.steps) > 1
            or any(s.role == "critic" for s in run.steps)
        ]
        first_code = {
            r["task_id"]: next(s.code for s in run.steps if s.role == "generator")
            for r, run in zip(mine, runs, strict=True)
        }
        reps = max(1, len({r["replicate"] for r in mine}))
        out[name] = {
            "runs": len(mine),
            "pass_rate": sum(bool(run.passed) for run in runs) / len(runs),
            "tokens_per_task": sum(run.tokens for run in runs) / len(runs),
            "calls_per_task": sum(run.calls for run in runs) / len(runs),
            "after_failure_runs": len(sampled),
            "repaired": sum(not r["passed_first"] and bool(run.passed) for r, run in sampled)
            / reps,
            "made_worse": sum(r["passed_first"] and not run.passed for r, run in sampled) / reps,
            "first_code_returned": sum(
                run.final_code == first_code[r["task_id"]] for r, run in sampled
            ),
            "errors": sum(run.stop.value == "provider_error" for run in runs),
            "leaks": sum(bool(r["leaks"]) for r in mine),
        }
    return out


def by_failure(table: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """How the first drafts that failed their evidence failed it (`failure_kind`), beside what each arm
    did there: {kind: {"problems": n, "first_passed": first drafts the hidden tests pass anyway,
    arm: mean over the problems of the share of replicates whose returned code passes}}."""
    out: dict[str, dict[str, Any]] = {}
    s = shares(table)
    kinds = {
        r["task_id"]: (r["failure"], r["passed_first"])
        for r in table
        if r["strategy"] == ONE_SHOT and r["failure"]
    }
    for kind in ("syntax", "exception", "assertion"):
        tasks = [t for t, (k, _) in kinds.items() if k == kind]
        if tasks:
            out[kind] = {
                "problems": len(tasks),
                "first_passed": sum(kinds[t][1] for t in tasks),
                **{arm: sum(s[arm][t] for t in tasks) / len(tasks) for arm in ARMS},
            }
    return out


def curve(
    table: list[dict[str, Any]], arm: str, samples: int = 4
) -> list[tuple[int, float, float]]:
    """(j, pass rate, tokens per task) for an arm allowed at most j samples after the first draft,
    j = 0..samples, replayed from its runs: the first of its first j samples that passed the evidence,
    else the draft with the most asserts passed among the first j + 1 (the earliest on a tie), with
    the tokens of the calls made by then. At j = 0 the first draft is returned as it is: nothing is
    charged but its call (no evidence is needed to return it, and no critique is made)."""
    mine = [r for r in table if r["strategy"] == arm]
    points = []
    for j in range(samples + 1):
        passed = tokens = 0.0
        for row in mine:
            run, verdicts = Run.from_dict(row["run"]), row["drafts"]
            gens = [s for s in run.steps if s.role == "generator"]
            if j == 0:
                passed += bool(verdicts.get(str(gens[0].index)))
                tokens += gens[0].prompt_tokens + gens[0].completion_tokens
                continue
            cut = gens[min(j, len(gens) - 1)].index  # the last draft the arm may have made
            kept = [s for s in run.steps if s.index <= cut + 1]  # with its check
            scores = [s.verdict.passed for s in kept if s.kind == "check" and s.verdict is not None]
            drafts = [s for s in kept if s.role == "generator"]
            i = best_index(scores) if len(scores) == len(drafts) else None
            passed += bool(verdicts.get(str(drafts[i if i is not None else 0].index)))
            tokens += sum(s.prompt_tokens + s.completion_tokens for s in kept if s.kind == "model")
        points.append((j, passed / len(mine), tokens / len(mine)))
    return points


def format_report(table: list[dict[str, Any]], replicates: int) -> str:
    """The analysis as text: what entered the after-failure phase, the per-arm table, the primary
    test, the Holm-corrected family, and the first drafts' failures beside what each arm repaired."""
    problems = sorted({r["task_id"] for r in table})
    entered = sorted(
        {
            r["task_id"]
            for r in table
            if r["strategy"] == BLIND
            and sum(s["role"] == "generator" for s in r["run"]["steps"]) > 1
        }
    )
    k, effect = smallest_detectable(len(problems), replicates)
    a = analyse(table)
    lines = [
        f"{len(problems)} problems, {replicates} replicate(s) of the after-failure phase; {len(entered)} problems' "
        f"first draft failed its evidence (only there can the arms differ)",
        f"smallest difference the primary test can call at p < 0.05: {k} problems all one way by one "
        f"replicate of {replicates} ({effect:.1%} of pass rate)",
        "",
        f"{'strategy':<22}{'pass':>7}{'tokens/task':>13}{'calls':>7}{'repaired':>10}{'made worse':>12}"
        f"{'draft 1 again':>15}{'errors':>8}{'leaks':>7}",
    ]
    for name, s in a["arms"].items():
        again = (
            f"{s['first_code_returned']} of {s['after_failure_runs']}" if name != ONE_SHOT else "-"
        )
        lines.append(
            f"{name:<22}{s['pass_rate']:>7.1%}{s['tokens_per_task']:>13,.0f}{s['calls_per_task']:>7.2f}"
            f"{s['repaired']:>10.2f}{s['made_worse']:>12.2f}{again:>15}{s['errors']:>8}{s['leaks']:>7}"
        )
    p = a["primary"]
    lines += [
        "",
        "primary: does feedback:checks beat feedback:blind? (per-problem share of replicates passing)",
        f"  {p['a']} - {p['b']}: {p['effect']:+.1%} of pass rate, 95% bootstrap interval "
        f"{p['interval'][0]:+.1%} to {p['interval'][1]:+.1%}; better on {p['better']}, worse on {p['worse']}, "
        f"same on {p['same']}; exact sign-flip p = {p['p']:.3f}",
        "",
        "secondary, Holm-corrected as one family of 6:",
    ]
    for t in a["secondary"]:
        lines.append(
            f"  {t['a']:<21} - {t['b']:<21}{t['effect']:>+7.1%}  [{t['interval'][0]:+.1%}, {t['interval'][1]:+.1%}]"
            f"  better {t['better']:>2}, worse {t['worse']:>2}   p = {t['p']:.3f}, Holm {t['p_holm']:.3f}"
        )
    kinds = by_failure(table)
    if kinds:
        lines += [
            "",
            "how the first drafts failed their evidence, and the share of replicates passing after it, per arm:",
            f"  {'failure':<11}{'problems':>9}{'first draft passes hidden':>27}"
            + "".join(f"{a.split(':')[1]:>13}" for a in ARMS),
        ]
        lines += [
            f"  {kind:<11}{k['problems']:>9}{k['first_passed']:>27}"
            + "".join(f"{k[a]:>13.0%}" for a in ARMS)
            for kind, k in kinds.items()
        ]
    return "\n".join(lines)
