"""Lesson 06's fair test as text: the per-arm table, the primary test, the Holm-corrected family and the first
drafts' failures (`format_report`), and the test at several model sizes (`format_sizes`). The analysis itself is
the answer key's, `reflect.evaluation.feedback`."""

from __future__ import annotations

from typing import Any

from reflect.evaluation.feedback import (
    ARMS,
    BLIND,
    ONE_SHOT,
    analyse,
    arm_stats,
    between,
    compare,
    shares,
    smallest_detectable,
    unjudged_problems,
)


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


def evidence_split(table: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The problems whose first draft failed its evidence, split by that evidence (the statement's
    "examples" or the agent's "own tests") and by the truth (the hidden tests fail the first draft: "really
    wrong"; they pass it: "wrongly rejected"): {group: {"problems", "correct": first drafts the hidden
    tests pass, arm: problems whose returned code passes, per replicate}}."""
    first = {r["task_id"]: r for r in table if r["strategy"] == ONE_SHOT and r["failure"]}
    s = shares(table)
    groups = {
        "examples": [t for t, r in first.items() if r["source"] == "examples"],
        "own tests": [t for t, r in first.items() if r["source"] == "self-tests"],
        "really wrong": [t for t, r in first.items() if not r["passed_first"]],
        "wrongly rejected": [t for t, r in first.items() if r["passed_first"]],
    }
    return {
        name: {
            "problems": len(tasks),
            "correct": sum(first[t]["passed_first"] for t in tasks),
            **{arm: sum(s[arm][t] for t in tasks) for arm in ARMS},
        }
        for name, tasks in groups.items()
    }


def format_sizes(tables: dict[str, list[dict[str, Any]]]) -> str:
    """The fair test at several model sizes ({size: its rows}): per strategy and size, the pass rate,
    tokens per task, and the effect against blind with its interval; then, for the first two sizes, the
    pre-stated question: does checks - blind differ between them (`between`: the second's minus the
    first's)?"""
    sizes = list(tables)
    stats = {size: arm_stats(t) for size, t in tables.items()}
    lines = [
        f"{'':<22}" + "".join(f"{size:^41}" for size in sizes),
        f"{'strategy':<22}"
        + f"{'pass':>7}{'tokens':>8}{'vs blind [95% interval]':>26}" * len(sizes),
    ]
    for name in (ONE_SHOT, *ARMS):
        cells = []
        for size in sizes:
            s = stats[size][name]
            if name == BLIND:
                against = "-"
            else:
                c = compare(tables[size], name, BLIND)
                against = f"{c['effect']:+.1%} [{c['interval'][0]:+.1%}, {c['interval'][1]:+.1%}]"
            cells.append(f"{s['pass_rate']:>7.1%}{s['tokens_per_task']:>8,.0f}{against:>26}")
        lines.append(f"{name:<22}" + "".join(cells))
    if len(sizes) > 1:
        (x, y), e = sizes[:2], between(tables[sizes[1]], tables[sizes[0]])
        lines += [
            "",
            f"between the sizes: checks - blind at {y} minus at {x}, per problem: {e['effect']:+.1%}, 95% bootstrap "
            f"interval {e['interval'][0]:+.1%} to {e['interval'][1]:+.1%}; larger at {y} on {e['better']}, "
            f"smaller on {e['worse']}, same on {e['same']} of {e['problems']}; exact sign-flip p = {e['p']:.3f}",
        ]
    return "\n".join(lines)


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
    unjudged = unjudged_problems(table)
    k, effect = smallest_detectable(len(problems), replicates)
    a = analyse(table)
    lines = [
        f"{len(problems)} problems, {replicates} replicate(s) of the after-failure phase; {len(entered)} problems' "
        f"first draft failed its evidence (only there can the arms differ)"
        + (
            f"; {len(unjudged)} had no evidence that could run: their first draft stands in every arm"
            if unjudged
            else ""
        ),
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
    lines += [
        "",
        "the first drafts that failed their evidence, by evidence and by truth; per arm, the problems whose"
        " returned code passes, per replicate:",
        f"  {'group':<18}{'problems':>9}{'correct':>9}"
        + "".join(f"{a.split(':')[1]:>13}" for a in ARMS),
    ]
    lines += [
        f"  {name:<18}{g['problems']:>9}{g['correct']:>9}" + "".join(f"{g[a]:>13.1f}" for a in ARMS)
        for name, g in evidence_split(table).items()
    ]
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
