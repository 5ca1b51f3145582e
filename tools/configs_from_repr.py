"""One-time converter: results files whose lines were keyed by `repr(strategy)`.

    python tools/configs_from_repr.py results/*.jsonl     # rewrites each file in place

A benchmark line's `config` used to be the strategy's repr, its dataclass fields as text. Now it
is the strategy's `config()` (reflect.strategies.base): the same fields as plain JSON values, the
sampling of the roles it calls and a fingerprint of the prompts it sends. A line whose repr is
that of one of the course's strategies as configured today (lesson 06's seven, lesson 05's
memory experiment, each also under the other lesson's names) gets that strategy's `config()`,
which holds today's prompts: right for these files, since the lessons read them as current
today. Any other line was already stale (another configuration, an earlier version) and keeps
its repr, which no `config()` equals, so it stays out of every report, as before.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from reflect.bench import strategies
from reflect.strategies.reflexion import memory_experiment


def legacy_repr(strategy) -> str:
    """The strategy's repr as the files hold it: Reflexion's `tests_for` was left out of it then."""
    return repr(strategy).replace(", tests_for=None)", ")")


def known() -> dict[str, dict]:
    """{repr as written: config()} for the course's strategies, under every name the lessons give them."""
    course = [*strategies(), *memory_experiment()]
    names = {s.name for s in course}
    return {legacy_repr(replace(s, name=n)): replace(s, name=n).config() for s in course for n in names}


def convert_rows(rows: list[dict], table: dict[str, dict]) -> tuple[list[dict], int]:
    """The rows with each known repr replaced by its config; how many were replaced."""
    out, done = [], 0
    for row in rows:
        config = row.get("config")
        if isinstance(config, str) and config in table:
            row, done = {**row, "config": table[config]}, done + 1
        out.append(row)
    return out, done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path)
    table = known()
    for path in ap.parse_args().files:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        new, done = convert_rows(rows, table)
        if done:
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in new), encoding="utf-8")
        print(f"{path}: {done} of {len(rows)} lines keyed by their config, "
              f"{sum(isinstance(r.get('config'), str) for r in new)} stale lines keep their repr", file=sys.stderr)


if __name__ == "__main__":
    main()
