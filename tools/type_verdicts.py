"""One-time converter: results files written while a step's verdict was a string.

    python tools/type_verdicts.py results/*.jsonl results/04_graph_vs_loop.json   # rewrites in place

A step's verdict used to be text ("score 7", "3/5 passed", "pass, score 0.8", "accepted
(score 8)"), and the report read it back with regular expressions; the graph's "accepted (score
8)" matched none of them, so its critic fell out of the judges' table. Now a judging step holds a
`reflect.records.Verdict` (accepted, score, asserts passed and run, reason, and the same text as
its `label`), and a step that judges nothing keeps its remark as `note` ("4 asserts", "same code
as attempt 1", a human's decision). This script gives every old verdict the fields today's code
would have written, read once from its text, by the role of its step:

- `tests` "P/T passed": accepted when P == T > 0;
- `reviewer` "approved" / "not approved";
- `critic` "score S" (lesson 03's loop): accepted when S reaches the threshold of the row's stop
  rule (`threshold=` in its configuration; 8, the course's default, where none is stated);
  "unusable": no decision, its reason the critique's text;
- `critic` "accepted (score S)" / "needs_revision (score S)" / "invalid" (lesson 04's graph);
- `evaluator` "pass, score S" / "fail, score S", or the reason it was unusable (a fail);
- `test_writer`, `human` and a `generator`'s "same code as attempt N": a note.

A file whose verdicts are all typed already is left as it is (running it twice changes nothing).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

TESTS = re.compile(r"^(\d+)/(\d+) passed$")
SCORE = re.compile(r"^score ([\d.]+)(?: \(\d+ calls\))?$")
UNUSABLE = re.compile(r"^unusable(?: \(\d+ calls\))?$")
GRAPH = re.compile(r"^(accepted|needs_revision|invalid)(?: \(score ([\d.]+)\))?$")
EVALUATOR = re.compile(r"^(pass|fail), score ([\d.]+)$")
NOTES = ("test_writer", "human", "generator")


def number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value


def verdict(label: str, accepted: bool | None, score: float | None = None, passed: int | None = None,
            total: int | None = None, reason: str = "") -> dict[str, Any]:
    """A Verdict as `dataclasses.asdict` writes it."""
    return {"label": label, "accepted": accepted, "score": score, "passed": passed, "total": total, "reason": reason}


def type_step(step: dict, threshold: float) -> dict:
    """The step as today's code writes it; a step already typed (or with no verdict) unchanged."""
    label = step.get("verdict")
    if not isinstance(label, str):
        return {**step, "note": step.get("note")}
    role = step["role"]
    if role in NOTES:
        return {**step, "verdict": None, "note": label}
    if role == "tests" and (m := TESTS.match(label)):
        passed, total = int(m[1]), int(m[2])
        typed = verdict(label, passed == total > 0, passed=passed, total=total)
    elif role == "reviewer" and label in ("approved", "not approved"):
        typed = verdict(label, label == "approved")
    elif role == "critic" and (m := SCORE.match(label)):
        typed = verdict(label, number(m[1]) >= threshold, number(m[1]))
    elif role == "critic" and UNUSABLE.match(label):
        typed = verdict(label, None, reason=step["reply"])
    elif role == "critic" and (m := GRAPH.match(label)):
        score = None if m[2] is None else number(m[2])
        typed = verdict(label, None if m[1] == "invalid" else m[1] == "accepted", score,
                        reason=step["reply"] if m[1] == "invalid" else "")
    elif role == "evaluator":
        m = EVALUATOR.match(label)
        typed = (verdict(label, m[1] == "pass", number(m[2])) if m else verdict(label, False, reason=label))
    else:
        raise ValueError(f"a {role} step's verdict {label!r} is not one this converter knows")
    return {**step, "verdict": typed, "note": None}


def threshold_of(row: dict) -> float:
    """The threshold of the row's stop rule: from its config (a dict since tools/configs_from_repr.py,
    a repr before), 8 where it states none."""
    config = row.get("config") or ""
    if isinstance(config, dict):
        return float((config.get("rule") or {}).get("threshold", 8.0))
    m = re.search(r"threshold=([\d.]+)", config)
    return float(m[1]) if m else 8.0


def type_run(run: dict, threshold: float) -> dict:
    return {**run, "steps": [type_step(s, threshold) for s in run.get("steps", [])]}


def type_row(row: dict) -> dict:
    """A bench results line (reflect.evaluation.runner) with typed verdicts."""
    return {**row, "run": type_run(row["run"], threshold_of(row))}


def type_tree(data: Any) -> Any:
    """Every Run dict anywhere in a lesson's results file (e.g. 04_graph_vs_loop.json), typed."""
    if isinstance(data, dict):
        if "steps" in data and "stop" in data and "task_id" in data:
            return type_run(data, 8.0)
        return {k: type_tree(v) for k, v in data.items()}
    if isinstance(data, list):
        return [type_tree(v) for v in data]
    return data


def convert(path: Path) -> int:
    """Rewrite one file in place; the number of steps whose verdict was typed or moved to a note."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        new = [type_row(r) for r in rows]
        out = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in new)
        before = [s for r in rows for s in r["run"]["steps"]]
    else:
        data = json.loads(text)
        new = type_tree(data)
        out = json.dumps(new, indent=1, ensure_ascii=False) + "\n"
        before = [step for run in runs_in(data) for step in run["steps"]]
    changed = sum(isinstance(s.get("verdict"), str) for s in before)
    if changed:
        path.write_text(out, encoding="utf-8")
    return changed


def runs_in(data: Any):
    """Every run (a dict with steps and a stop) anywhere inside a results file's JSON."""
    if isinstance(data, dict):
        if "steps" in data and "stop" in data:
            yield data
        else:
            for v in data.values():
                yield from runs_in(v)
    elif isinstance(data, list):
        for v in data:
            yield from runs_in(v)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path)
    for path in ap.parse_args().files:
        print(f"{path}: {convert(path)} verdicts typed", file=sys.stderr)


if __name__ == "__main__":
    main()
