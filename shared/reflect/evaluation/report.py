"""Reading a bench results file (reflect.evaluation.runner): the numbers lesson 06 reports, recomputed from the
rows `load_rows` returns, never from memory of a run: per strategy pass rate, tokens, drafts, latency, "made
worse" and leaks; the resampling curve; pass@k (Chen et al., 2021); a paired sign test against one-shot. The
benchmark's command line adds its own tables (course_bench.analysis).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from ..records import Run

Row = dict[str, Any]
DRAFT_ROLES = ("generator", "refiner")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The probability that at least one of k samples, drawn without replacement from n of
    which c are correct, is correct: 1 - C(n-c, k) / C(n, k) (unbiased; needs n >= k)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    return 1.0 if n - c < k else 1.0 - math.comb(n - c, k) / math.comb(n, k)


def by_strategy(rows: list[Row]) -> dict[str, list[Row]]:
    """Rows grouped by strategy, in the order the strategies first appear."""
    out: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        out[row["strategy"]].append(row)
    return dict(out)


def run_of(row: Row) -> Run:
    """The row's Run."""
    return Run.from_dict(row["run"])


def drafts_of(row: Row) -> list[tuple[int, bool | None]]:
    """(step index, hidden tests pass) for each draft a generator or refiner wrote, in order."""
    verdicts = row.get("drafts") or {}
    return [
        (s.index, verdicts.get(str(s.index)))
        for s in run_of(row).steps
        if s.code is not None and s.role in DRAFT_ROLES
    ]


def made_worse(row: Row) -> bool:
    """The first draft passed the hidden tests and the run returned a draft that does not."""
    drafts = drafts_of(row)
    return bool(drafts) and drafts[0][1] is True and run_of(row).passed is False


def summary(rows: list[Row], baseline: str = "one-shot") -> list[dict[str, Any]]:
    """One dict per strategy: tasks, passed, pass_rate, tokens_per_task (prompt_per_task and
    completion_per_task, its two parts), x_baseline, tokens_per_solved, calls and drafts (mean
    per run), latency_s (mean wall time of a run), made_worse, leaks."""
    groups = by_strategy(rows)
    base = groups.get(baseline)
    base_tokens = sum(run_of(r).tokens for r in base) / len(base) if base else None
    out = []
    for name, mine in groups.items():
        runs = [run_of(r) for r in mine]
        passed = sum(bool(r.passed) for r in runs)
        tokens = sum(r.tokens for r in runs)
        out.append(
            {
                "strategy": name,
                "tasks": len(runs),
                "passed": passed,
                "pass_rate": passed / len(runs),
                "tokens_per_task": tokens / len(runs),
                "prompt_per_task": sum(s.prompt_tokens for r in runs for s in r.steps) / len(runs),
                "completion_per_task": sum(s.completion_tokens for r in runs for s in r.steps)
                / len(runs),
                "calls": sum(r.calls for r in runs) / len(runs),
                "x_baseline": tokens / len(runs) / base_tokens if base_tokens else None,
                "tokens_per_solved": tokens / passed if passed else None,
                "drafts": sum(len(drafts_of(r)) for r in mine) / len(runs),
                "latency_s": sum(r.wall_s for r in runs) / len(runs),
                "made_worse": sum(made_worse(r) for r in mine),
                "leaks": sum(bool(r.get("leaks")) for r in mine),
            }
        )
    return out


def paired(rows: list[Row], strategy: str, baseline: str = "one-shot") -> dict[str, Any]:
    """The strategy against the baseline on the tasks both ran: wins (it passes, the baseline
    fails), losses (the reverse), ties, and the two-sided exact sign test's p-value on the wins
    and losses (McNemar's exact test): the chance of a split at least this uneven if neither
    strategy were better. Ties carry no information about which is better."""
    groups = by_strategy(rows)
    mine = {r["task_id"]: bool(r["run"]["passed"]) for r in groups.get(strategy, [])}
    base = {r["task_id"]: bool(r["run"]["passed"]) for r in groups.get(baseline, [])}
    both = [t for t in mine if t in base]
    wins = sum(mine[t] and not base[t] for t in both)
    losses = sum(base[t] and not mine[t] for t in both)
    n = wins + losses
    return {
        "tasks": len(both),
        "wins": wins,
        "losses": losses,
        "ties": len(both) - n,
        "p": exact_sign_test(wins, losses),
    }


def exact_sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test (McNemar's exact test) on the pairs that disagree: the chance, if
    neither side were better, of a split of the wins + losses at least this uneven."""
    n = wins + losses
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n if n else 1.0
    return min(1.0, 2 * tail)


def samples_of(row: Row) -> list[tuple[int, int | None, bool | None]]:
    """A resampling run's samples: (tokens of the sample, own asserts passed or None, hidden pass)."""
    verdicts = row.get("drafts") or {}
    out: list[list] = []
    for step in run_of(row).steps:
        if step.role == "generator":
            out.append(
                [step.prompt_tokens + step.completion_tokens, None, verdicts.get(str(step.index))]
            )
        elif (
            step.role == "tests"
            and out
            and step.verdict is not None
            and step.verdict.passed is not None
        ):
            out[-1][1] = step.verdict.passed
    return [tuple(s) for s in out]


def resample_curve(rows: list[Row], strategy: str) -> list[tuple[int, float, float]]:
    """(j, pass rate, tokens per task) for j = 1..k samples, from one run of k samples per task:
    the sample the evidence chooses among the first j (most asserts passed, earliest on a tie),
    and the tokens of those j samples, plus the evidence's (the test writer's call) from j = 2 on:
    a single sample is returned as it is, with nothing to choose it by. A run that stopped early
    counts its choice for every larger j."""
    mine = by_strategy(rows).get(strategy, [])
    if not mine:
        return []
    k = max(len(samples_of(r)) for r in mine)
    curve = []
    for j in range(1, k + 1):
        ok, tokens = 0, 0
        for row in mine:
            samples = samples_of(row)[:j]
            run = run_of(row)
            if j > 1:  # one sample needs no evidence: there is nothing to choose between
                tokens += sum(
                    s.prompt_tokens + s.completion_tokens
                    for s in run.steps
                    if s.role == "test_writer"
                )
            tokens += sum(s[0] for s in samples)
            if samples:
                best = max(range(len(samples)), key=lambda i: (samples[i][1] or 0, -i))
                ok += bool(samples[best][2])
        curve.append((j, ok / len(mine), tokens / len(mine)))
    return curve


def repeats_of_first(rows: list[Row], strategy: str) -> tuple[int, int]:
    """(drafts after the first whose code is the first draft's, byte for byte; drafts after
    the first) over a strategy's runs: how often a sample shown the failed draft, or not shown it, gave it back."""
    same = later = 0
    for row in by_strategy(rows).get(strategy, []):
        codes = [
            s.code or "" for s in run_of(row).steps if s.role in DRAFT_ROLES and s.code is not None
        ]
        later += len(codes[1:])
        same += sum(c == codes[0] for c in codes[1:])
    return same, later


def provenance(rows: list[dict[str, Any]], command: str) -> str:
    """One line on where a table's runs come from: how many, the model, how many requests were in
    flight at once, and the command that recorded them."""
    metas = [r.get("meta") or {} for r in rows]
    models = sorted({m.get("model", "unknown model") for m in metas})
    at_once = sorted({m.get("concurrency", 1) for m in metas})
    return (
        f"{len(rows)} runs, model {', '.join(models)}, {' or '.join(map(str, at_once))} request(s) at a time, "
        f"recorded by `{command}`"
    )


def verdicts_beside(
    recorded: list[dict[str, Any]], sample: list[dict[str, Any]]
) -> tuple[int, int, list[str]]:
    """A live sample's hidden-test verdicts beside the recorded verdicts of the same (strategy, task):
    (how many agree, how many were compared, one line per run that differs)."""
    before = {(r["strategy"], r["task_id"]): bool(r["run"]["passed"]) for r in recorded}
    same, lines = 0, []
    for r in sample:
        key = (r["strategy"], r["task_id"])
        if key not in before:
            continue
        now = bool(r["run"]["passed"])
        if now == before[key]:
            same += 1
        else:
            lines.append(
                f"{key[0]} on {key[1]}: recorded {'pass' if before[key] else 'fail'}, "
                f"this run {'pass' if now else 'fail'}"
            )
    return same, same + len(lines), lines
