"""Lesson 06's fair test, feedback or more tries: its arms (`feedback_arms`: `Resample` configurations that
differ only in what a sample after a failed first draft sees), its runs read from a results file (`rows`), and
the analysis stated before the run (`analyse`; docs/feedback_experiment.md, and docs/package.md,
"The modules in detail").
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..judging.controller import best_index
from ..model.roles import SAMPLING
from ..records import Run, Stop, parse_python
from ..strategies.resample import Resample
from .runner import current_rows, load_rows

# lesson 06's fair test: what a sample after a failed first draft sees, by arm
ARM_FEEDBACK = {
    "feedback:blind": "none",  # the task only: resampling with the same first draft and stop rule
    "feedback:checks": "failure",  # the checks it failed, never its code
    "feedback:checks+code": "failure+code",  # its code and the checks it failed
    "feedback:critique": "critique+code",  # its code and a critique by lesson 03's critic
}
SAMPLES_AFTER = 4  # samples after a failed first draft, at most, in every arm


def feedback_arm(arm: str, replicate: int = 0) -> Resample:
    """One arm of lesson 06's fair test in one replicate."""
    return Resample(
        k=1 + SAMPLES_AFTER,
        select="examples-or-self-tests",
        stop_on_pass=True,
        first="draft",
        feedback=ARM_FEEDBACK[arm],
        name=arm if replicate == 0 else f"{arm}#{replicate}",
        replicate=replicate,
        sample_tokens=SAMPLING["generator"]["max_tokens"],
    )


def feedback_arms(replicates: int = 2) -> list[Resample]:
    """Every arm in every replicate, replicate by replicate."""
    return [feedback_arm(arm, r) for r in range(replicates) for arm in ARM_FEEDBACK]


ARMS = tuple(ARM_FEEDBACK)
BLIND, CHECKS, CHECKS_CODE, CRITIQUE = ARMS
ONE_SHOT = "one-shot"
PRIMARY = (CHECKS, BLIND)
SECONDARY = ((CHECKS_CODE, CHECKS), (CRITIQUE, BLIND), *((arm, ONE_SHOT) for arm in ARMS))
_BOOTSTRAP = 10_000  # resamples of the problems, seed 0


def arm_of(name: str) -> tuple[str, int]:
    """(arm, replicate) of a strategy name of `feedback_arms`: "feedback:checks#1" is replicate 1."""
    arm, _, replicate = name.partition("#")
    return arm, int(replicate or 0)


def failed_checks(trace: str) -> list[tuple[str, str]]:
    """The asserts a check failed, each with what the draft gave, from its step's trace
    ("Tests failed:" lines, "ASSERT # output: ACTUAL")."""
    failed = trace.partition("Tests failed:")[2].strip()
    if failed in ("", "none"):
        return []
    return [
        tuple(line.rsplit(" # output: ", 1))
        for line in failed.splitlines()
        if " # output: " in line
    ]


def failure_kind(code: str, failed: Sequence[tuple[str, str]]) -> str:
    """How a first draft failed its evidence: "syntax" (no code, or code that does not parse or
    load), "exception" (an assert raised, or timed out), or "assertion" (a wrong value)."""
    try:
        parse_python(code)
    except SyntaxError:
        return "syntax"
    actual = [a for _, a in failed]
    if not code.strip() or all(a in ("not run", "no code") for a in actual):
        return "syntax"
    if any(
        a.startswith("raised ") or a == "timed out" or a.startswith("process ended") for a in actual
    ):
        return "exception"
    return "assertion"


def _first(run: Run) -> tuple[Any, Any]:
    """The run's first draft step and the check of it (None without evidence)."""
    steps = list(run.steps)
    i = next(n for n, s in enumerate(steps) if s.role == "generator")
    check = steps[i + 1] if i + 1 < len(steps) and steps[i + 1].role == "tests" else None
    return steps[i], check


def rows(path: Path, replicates: int | None = None) -> tuple[list[dict[str, Any]], int]:
    """The fair test's runs in a results file as the analysis's table, and R: `replicates`, or as many
    as the file holds. A row per (arm, problem, replicate) (`strategy` is the arm, with `replicate`,
    `run`, `drafts`, `leaks`: the shape `reflect.evaluation.report` reads), and one-shot's row per problem:
    the shared first draft alone, its call only. Every row of a problem carries `passed_first` (the
    hidden tests' verdict on the first draft), `source` (the evidence: the statement's "examples" or the
    agent's "self-tests") and `failure` (how the first draft failed its evidence, or None). A problem is
    included only with every arm in replicates 0 to R - 1 (a recording under way has the others)."""
    loaded = load_rows(path)
    found = max(
        (arm_of(r["strategy"])[1] + 1 for r in loaded if arm_of(r["strategy"])[0] in ARMS),
        default=0,
    )
    R = min(found, replicates) if replicates else found
    if R < 1:
        raise ValueError(f"{path}: no run of the fair test's arms yet")
    arms = feedback_arms(R)
    lines = current_rows(path, arms, loaded=loaded)
    by_problem: dict[str, dict[str, dict]] = {}
    for line in lines:
        by_problem.setdefault(line["task_id"], {})[line["strategy"]] = line
    out: list[dict[str, Any]] = []
    for tid, mine in by_problem.items():
        if len(mine) < len(arms):
            continue
        base = mine[BLIND]
        run = Run.from_dict(base["run"])
        first, check = _first(run)
        passed_first = bool(base["drafts"][str(first.index)])
        failed = failed_checks(check.reply) if check is not None else []
        common = {
            "task_id": tid,
            "passed_first": passed_first,
            "source": "self-tests"
            if any(s.role == "test_writer" for s in run.steps)
            else "examples",
            "failure": failure_kind(first.code or "", failed) if failed else None,
        }
        one = Run(
            strategy=ONE_SHOT,
            task_id=tid,
            final_code=first.code or "",
            stop=Stop.SINGLE_DRAFT,
            steps=(replace(first, index=0),),
            chosen="draft 1: the only one",
            passed=passed_first,
        )
        out.append(
            {
                "strategy": ONE_SHOT,
                **common,
                "replicate": 0,
                "drafts": {"0": passed_first},
                "run": one.to_dict(),
                "leaks": base["leaks"],
            }
        )
        for arm in ARMS:
            for r in range(R):
                line = mine[arm if r == 0 else f"{arm}#{r}"]
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
    return out, R


def incomplete(path: Path, replicates: int) -> list[str]:
    """The problems that some arm in replicates 0 to `replicates` - 1 has not run yet (while a recording
    is under way), in the file's order."""
    names = {s.name for s in feedback_arms(replicates)}
    seen: dict[str, set[str]] = {}
    for line in current_rows(path, feedback_arms(replicates)):
        seen.setdefault(line["task_id"], set()).add(line["strategy"])
    return [t for t, have in seen.items() if have != names]


# --- the analysis ------------------------------------------------------------------------------------


def shares(table: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """{strategy: {task: share of its replicates whose returned code passes the hidden tests}}."""
    count: dict[str, dict[str, list[int]]] = {}
    for row in table:
        cell = count.setdefault(row["strategy"], {}).setdefault(row["task_id"], [0, 0])
        cell[0] += bool(row["run"]["passed"])
        cell[1] += 1
    return {s: {t: p / n for t, (p, n) in by_task.items()} for s, by_task in count.items()}


def _by_problem(table: list[dict[str, Any]], a: str, b: str) -> dict[str, float]:
    """{problem: a's share minus b's}, for the problems both have, in a's order."""
    s = shares(table)
    return {t: s[a][t] - s[b][t] for t in s[a] if t in s[b]}


def differences(table: list[dict[str, Any]], a: str, b: str) -> list[float]:
    """Per problem, a's share minus b's (the problems both have, in a's order)."""
    return list(_by_problem(table, a, b).values())


def size_gap(
    table: list[dict[str, Any]], other: list[dict[str, Any]], a: str, b: str
) -> dict[str, float]:
    """{problem: e}, e = (a - b in `table`) - (a - b in `other`), for the problems both recordings hold,
    each arm's replicates averaged per recording (lesson 06's Build 9)."""
    mine, theirs = _by_problem(table, a, b), _by_problem(other, a, b)
    return {t: mine[t] - theirs[t] for t in mine if t in theirs}


def between(
    table: list[dict[str, Any]], other: list[dict[str, Any]], a: str = CHECKS, b: str = BLIND
) -> dict[str, Any]:
    """Does a - b differ between two recordings of the same problems (two model sizes)? Per problem both
    hold, e = (a - b in `table`) - (a - b in `other`) (`size_gap`): its mean, interval and sign-flip p
    (under the null each e(p) is as likely negated, as in the primary test), and on how many problems a - b
    was larger in `table` ("better"), smaller ("worse"), the same: `compare`'s summary of e."""
    return _summary(list(size_gap(table, other, a, b).values()), a, b)


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
    diffs: Sequence[float], n: int = _BOOTSTRAP, seed: int = 0, level: float = 0.95
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
    return _summary(differences(table, a, b), a, b)


def _summary(d: list[float], a: str, b: str) -> dict[str, Any]:
    """Per-problem differences summarised: mean, interval, sign-flip p, how many above, below, at zero."""
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


def curve(
    table: list[dict[str, Any]], arm: str, samples: int = SAMPLES_AFTER
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


def unjudged_problems(table: list[dict[str, Any]]) -> set[str]:
    """The problems no evidence could judge (the agent's own tests had no assert that ran): no sample is
    drawn there, and the first draft stands in every arm."""
    return {
        r["task_id"]
        for r in table
        if r["strategy"] == BLIND and not any(s["role"] == "tests" for s in r["run"]["steps"])
    }
