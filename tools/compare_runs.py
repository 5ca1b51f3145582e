"""Compare the notebooks a live run executed (build/run/, `make run`: the solved lessons) with the
committed solved ones (solutions/).

    python tools/compare_runs.py            # every notebook in build/run/
    python tools/compare_runs.py --only 04

For each code cell it compares the text outputs (printed text and plain-text results), after
blanking what a live run changes by nature: the banner line (live instead of replay), wall-clock
and model-time figures (seconds, minutes, latencies), progress bars (stderr, or a widget) and
memory addresses. Model replies, verdicts, tables and token counts are compared as they are. It prints
each cell that differs, with its first differing line, and a count per notebook; it exits 1 if
any cell differs, so a reproducible run prints no cell.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
TIMING = [
    (re.compile(r"^\[reflect\] backend=.*$", re.M), "[reflect] <banner>"),
    (
        re.compile(
            r", replayed: the recording's time|; \d+ of the calls replayed, at the recording's time"
        ),
        "",
    ),  # a replayed run's model time says it is the recording's
    (re.compile(r" \(replayed here: run live to compare\)"), ""),  # and so does its live sample
    (
        re.compile(r"\((?:about \d+ min|under a minute)\)"),
        "(<time>)",
    ),  # before the figures it holds
    (re.compile(r"\d[\d,]*(?:\.\d+)?\s?(?:ms|s|min|minutes|seconds|h)\b"), "<time>"),
    (re.compile(r"latency[^\n]*"), "latency <time>"),
    (
        re.compile(r"^(\S+\s+\d+\s+\d+\s+\d+\s+\d+\s+)\d+\.\d(\s+\d+\.\d{4})$", re.M),
        r"\1<time>\2",
    ),  # a ledger table's latency column
    (re.compile(r"\d+ (?:prompt |completion )?tokens per second"), "<speed>"),
    (
        re.compile(r" \(\d+ answered from the cache[^)]*\)"),
        "",
    ),  # the live request cache's count: depends on what ran before
    (re.compile(r"0x[0-9a-fA-F]{6,16}"), "0xADDRESS"),
    (re.compile(r"\bbuild/results/"), "results/"),  # a live run writes its results under build/
]


def texts(cell) -> str:
    """The cell's comparable output: stdout text and plain-text results, timing blanked."""
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stderr":
            continue  # progress bars and warnings from the libraries
        if "application/vnd.jupyter.widget-view+json" in out.get("data", {}):
            continue  # a progress bar drawn as a widget: its text is the bar
        parts.append("".join(out.get("text", "")))
        parts.append("".join(out.get("data", {}).get("text/plain", "")))
    text = "".join(parts)
    for pattern, replacement in TIMING:
        text = pattern.sub(replacement, text)
    return text


def compare(run: Path, committed: Path) -> list[str]:
    """One line per code cell whose outputs differ."""
    ran, ref = nbformat.read(run, as_version=4), nbformat.read(committed, as_version=4)
    a = [c for c in ref.cells if c.cell_type == "code"]
    b = [c for c in ran.cells if c.cell_type == "code"]
    if len(a) != len(b):
        return [f"{run.name}: {len(b)} code cells, the committed notebook has {len(a)}"]
    lines = []
    for i, (old, new) in enumerate(zip(a, b, strict=True)):
        before, after = texts(old), texts(new)
        if before != after:
            diff = [
                d
                for d in difflib.unified_diff(
                    before.splitlines(), after.splitlines(), lineterm="", n=0
                )
                if d[:1] in "+-" and not d.startswith(("+++", "---"))
            ]
            was = next((d[1:].strip() for d in diff if d.startswith("-")), "")
            now = next((d[1:].strip() for d in diff if d.startswith("+")), "")
            lines.append(
                f"{run.name} code cell {i}: committed {was[:70]!r} | this run {now[:70]!r}"
            )
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", help="notebook number prefix, e.g. 04")
    args = ap.parse_args()
    runs = sorted((ROOT / "build" / "run").glob(f"{args.only or ''}*.ipynb"))
    if not runs:
        sys.exit("No executed notebooks in build/run/: run `make run` first.")
    differing = 0
    for run in runs:
        found = compare(run, ROOT / "solutions" / run.name)
        differing += len(found)
        print(*found, sep="\n") if found else None
        print(f"{run.name}: {len(found)} code cells differ")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
