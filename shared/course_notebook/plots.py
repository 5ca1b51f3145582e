"""Plots with a fixed size and style, so committed notebook outputs stay stable."""

from __future__ import annotations

import matplotlib.pyplot as plt

from reflect.records import Run


def context_growth(results: dict[str, Run], title: str = "The shared thread grows every turn"):
    """Prompt tokens per call over the turns of one or more loops."""
    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=80)
    for label, res in results.items():
        xs = list(range(1, len(res.steps) + 1))
        ax.plot(xs, [t.prompt_tokens for t in res.steps], marker="o", label=label)
    ax.set_xlabel("call (generator and reviewer alternate)")
    ax.set_ylabel("prompt tokens sent")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    return fig


def graph_layers(
    nodes: list[str], edges: list[tuple[str, str]]
) -> tuple[dict[str, int], set[tuple[str, str]]]:
    """Rows for a top-down drawing of a graph that may loop: (row of each node, the back edges).

    A depth-first walk from the first node marks an edge back to a node still on the walk's path as
    a back edge (a loop going round again). Over the other edges every node sits as low as it can:
    one row above the highest node it leads to, the ends on the last row, so the ends line up.
    """
    succ: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b in edges:
        succ[a].append(b)
    back: set[tuple[str, str]] = set()
    on_path: set[str] = set()
    seen: set[str] = set()

    def walk(n: str) -> None:
        seen.add(n)
        on_path.add(n)
        for m in succ[n]:
            if m in on_path:
                back.add((n, m))
            elif m not in seen:
                walk(m)
        on_path.discard(n)

    for n in nodes:
        if n not in seen:
            walk(n)
    height: dict[str, int] = {}  # the longest forward path from a node to an end

    def reach(n: str) -> int:
        if n not in height:
            height[n] = max((reach(m) + 1 for m in succ[n] if (n, m) not in back), default=0)
        return height[n]

    depth = max(reach(n) for n in nodes)
    return {n: depth - reach(n) for n in nodes}, back


def _bend(p0, p2, boxes, rads) -> float | None:
    """The first `rad` (matplotlib's arc3 bend) whose curve from p0 to p2 passes clear of every box."""
    for rad in rads:
        (x0, y0), (x2, y2) = p0, p2
        cx, cy = (x0 + x2) / 2 + rad * (y2 - y0), (y0 + y2) / 2 - rad * (x2 - x0)
        points = [
            (
                (1 - t) ** 2 * x0 + 2 * t * (1 - t) * cx + t * t * x2,
                (1 - t) ** 2 * y0 + 2 * t * (1 - t) * cy + t * t * y2,
            )
            for t in (i / 40 for i in range(2, 39))
        ]
        if not any(a <= px <= b and c <= py <= d for px, py in points for a, b, c, d in boxes):
            return rad
    return None


def graph_picture(drawable, note: str = "dashed: a conditional edge, a router picks one"):
    """A compiled graph's `get_graph()` drawn with matplotlib: no network, no Graphviz, no Mermaid.

    Nodes stand in rows top-down (`graph_layers`), each row centred. An edge is a straight arrow
    where one clears every other node, else the least bent curve that does; a loop back leaves and
    enters its nodes at the side.
    """
    names = {key: node.name for key, node in drawable.nodes.items()}
    label = {
        key: {"__start__": "start", "__end__": "end"}.get(name, name) for key, name in names.items()
    }
    row, back = graph_layers(list(names), [(e.source, e.target) for e in drawable.edges])
    rows = [[n for n in names if row[n] == r] for r in range(max(row.values()) + 1)]
    char, box_h, gap, spread = (
        0.075,
        0.28,
        0.62,
        2.1,
    )  # inches: a monospace 9 pt character, row pitch
    x = {n: (i - (len(r) - 1) / 2) * spread for r in rows for i, n in enumerate(r)}
    y = {n: -row[n] * gap for n in names}
    half = {n: (len(label[n]) * char + 0.2) / 2 for n in names}
    box = {
        n: (
            x[n] - half[n] - 0.06,
            x[n] + half[n] + 0.06,
            y[n] - box_h / 2 - 0.05,
            y[n] + box_h / 2 + 0.05,
        )
        for n in names
    }
    left, right = min(b[0] for b in box.values()) - 0.9, max(b[1] for b in box.values()) + 0.9
    bottom, top = -(len(rows) - 1) * gap - box_h / 2 - 0.45, box_h / 2 + 0.2
    fig, ax = plt.subplots(figsize=(right - left, top - bottom), dpi=80)
    ax.set_xlim(left, right)
    ax.set_ylim(bottom, top)
    ax.axis("off")
    for n in names:
        end = names[n] in ("__start__", "__end__")
        ax.text(
            x[n],
            y[n],
            label[n],
            ha="center",
            va="center",
            family="monospace",
            fontsize=9,
            bbox={
                "boxstyle": "round,pad=0.35" if end else "square,pad=0.35",
                "fc": "white" if end else "#eeeaff",
                "ec": "#5b4fc4",
            },
        )
    steps = [r * s for r in (0.2, 0.35, 0.5, 0.7, 0.9) for s in (1, -1)]
    for edge in drawable.edges:
        a, b = edge.source, edge.target
        if (a, b) in back:  # out of the side, round, into the side
            p0, p2, rads = (
                (x[a] + half[a] + 0.1, y[a]),
                (x[b] + half[b] + 0.1, y[b]),
                [r for r in steps if r >= 0.5],
            )
        else:
            p0, p2, rads = (
                (x[a], y[a] - box_h / 2 - 0.05),
                (x[b], y[b] + box_h / 2 + 0.05),
                [0, *steps],
            )
        others = [box[n] for n in names if n not in (a, b)]
        rad = _bend(p0, p2, others, rads)
        ax.annotate(
            "",
            xy=p2,
            xytext=p0,
            arrowprops={
                "arrowstyle": "-|>",
                "shrinkA": 0,
                "shrinkB": 0,
                "color": "#333",
                "lw": 1,
                "ls": "--" if edge.conditional else "-",
                "connectionstyle": f"arc3,rad={rads[-1] if rad is None else rad}",
            },
        )
    ax.text(left + 0.1, bottom + 0.05, note, fontsize=8, color="#555", va="bottom")
    fig.subplots_adjust(0, 0, 1, 1)
    return fig


_FEEDBACK_STYLE = {  # one colour and one marker per arm, hollow markers: a point under another still shows its edge
    "feedback:blind": ("C0", "o"),
    "feedback:checks": ("C1", "s"),
    "feedback:checks+code": ("C2", "^"),
    "feedback:critique": ("C3", "D"),
}


def feedback_curves(ax, table: list[dict], title: str):
    """Lesson 06's experiment on one axis: each arm's pass rate against tokens per task as it may draw
    j = 0..4 samples after a failed first draft (`reflect.evaluation.feedback.curve`; j = 0 is the first
    draft alone, one-shot, drawn once as a star)."""
    from reflect.evaluation.feedback import ARMS, curve

    start = None
    for arm in ARMS:
        points = curve(table, arm)
        start = points[0]
        colour, marker = _FEEDBACK_STYLE[arm]
        ax.plot(
            [t for *_, t in points[1:]],
            [r for _, r, _ in points[1:]],
            "-",
            marker=marker,
            ms=6,
            mfc="none",
            color=colour,
            label=f"{arm}, j = 1..{len(points) - 1}",
        )
        ax.plot([start[2], points[1][2]], [start[1], points[1][1]], ":", color=colour)
    ax.plot(start[2], start[1], "k*", ms=11, label="one-shot (the shared first draft)")
    ax.set(
        xscale="log",
        xlabel="tokens per task (log; every call counted)",
        ylabel="pass rate (hidden tests)",
        title=title,
    )
    lo, hi = ax.get_xlim()
    ticks = [t for t in (200, 300, 500, 700, 1_000, 1_500, 2_000, 3_000, 5_000) if lo <= t <= hi]
    ax.set_xticks(ticks, [f"{t:,}" for t in ticks])
    ax.minorticks_off()
    ax.grid(alpha=0.3)
    return ax


_STYLES = ("-", "--", ":", "-.")  # one per line, so lines that coincide stay visible


def draft_scores(runs: dict, critic, title: str = "The critic's score of each draft"):
    """One panel per revise step: for every task its loop revised (a `DraftLog` with more than one draft), the
    critic's score of each draft in turn; a filled marker is a draft that passes the hidden tests."""
    fig, axes = plt.subplots(
        1, len(runs), figsize=(4.2 * len(runs), 3.2), dpi=80, sharey=True, squeeze=False
    )
    for ax, (label, logs) in zip(axes[0], runs.items(), strict=True):
        for i, (tid, log) in enumerate((t, lg) for t, lg in logs.items() if len(lg.drafts) > 1):
            scores = [critic.evaluate(log.task, d.code).score for d in log.drafts]
            xs = list(range(1, len(scores) + 1))
            ax.plot(
                xs, scores, _STYLES[i % 4], color=f"C{i}", label=tid
            )  # a style each: equal scores overlap
            for x, y, v in zip(xs, scores, log.verdicts(), strict=True):
                ax.plot(
                    x,
                    y,
                    "o",
                    color=f"C{i}",
                    mfc=f"C{i}" if v == "pass" else "none",
                    ms=10 - 2 * (i % 3),
                )
        ax.set(title=label, xlabel="draft", ylim=(0, 10.5))
        ax.set_xticks([1, 2, 3, 4])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    axes[0][0].set_ylabel("critic score (filled: passes hidden)")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def calibration_bars(
    pairs: list, title: str = "What a score says: the share of its drafts that pass"
):
    """Per score, the share of the drafts given it that pass the hidden tests (with how many), beside the base
    rate over every scored draft: a score says something only where its bar is far from the line."""
    from reflect.judging.calibration import base_rate

    groups: dict = {}
    for score, passed in pairs:
        if score is not None:
            groups.setdefault(score, []).append(bool(passed))
    scores = sorted(groups)
    shares = [sum(groups[s]) / len(groups[s]) for s in scores]
    fig, ax = plt.subplots(figsize=(5, 3), dpi=80)
    bars = ax.bar([f"{s:g}" for s in scores], shares, color="C0")
    for bar, s in zip(bars, scores, strict=True):
        ax.annotate(
            f"n={len(groups[s])}",
            (bar.get_x() + bar.get_width() / 2, bar.get_height()),
            ha="center",
            va="bottom",
        )
    ax.axhline(base_rate(pairs), ls="--", color="k", label="base rate (every scored draft)")
    ax.set(xlabel="score", ylabel="share passing the hidden tests", ylim=(0, 1.15), title=title)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    return fig


def pass_by_attempt(runs_by_mode: dict, hidden, title: str = "A right draft written, by attempt"):
    """Per memory mode, the share of tasks with a draft that passes the hidden tests among their first k
    attempts, k = 1, 2, ... (a run that stopped keeps what it wrote), and, at the right, the share whose
    returned draft passes."""
    fig, ax = plt.subplots(figsize=(5.6, 3.2), dpi=80)
    most = max((len(r.drafts) for runs in runs_by_mode.values() for r in runs), default=1)
    for i, (mode, runs) in enumerate(runs_by_mode.items()):
        written = [
            sum(any(hidden(r.task_id, d) for d in r.drafts[:k]) for r in runs) / len(runs)
            for k in range(1, most + 1)
        ]
        returned = sum(hidden(r.task_id, r.final_code) for r in runs) / len(runs)
        ax.plot(
            range(1, most + 1),
            written,
            _STYLES[i % 4],
            marker="o",
            ms=9 - 2 * i,
            color=f"C{i}",
            label=mode,
        )
        ax.plot(
            most + 0.5, returned, "s", color=f"C{i}", mfc="none", ms=12 - 2 * i
        )  # equal shares overlap
    ax.set_xticks([*range(1, most + 1), most + 0.5], [*map(str, range(1, most + 1)), "returned"])
    ax.set(
        xlabel="attempts (a line under another has the same shares)",
        ylabel="share of tasks",
        title=title,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
