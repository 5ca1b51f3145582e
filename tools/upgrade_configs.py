"""One-time converter: results lines keyed by a strategy's config from before it gained a setting.

    python tools/upgrade_configs.py results/*.jsonl     # rewrites each file in place

A benchmark line is keyed by its strategy's `config()` (reflect.strategies.base). When a strategy
gains a setting whose default does exactly what the strategy did before, the lines written
before it lack that key, and no `config()` of today would equal theirs: the runs would drop out of
every report and a resumed benchmark would redo them. `ADDED` lists each such setting with that
default; a line of that strategy without the key gets it. A line that has the key is left alone,
so converting twice changes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

# strategy class -> {setting: the default that reproduces what it did before the setting existed}
ADDED: dict[str, dict[str, object]] = {
    "Resample": {"first": "sample", "feedback": "none"},  # best-of-k gained its first draft and its repair samples
}


def upgrade(config: object) -> object:
    """The config with every setting added since it was written, at its old behaviour's default."""
    if not isinstance(config, dict) or config.get("strategy") not in ADDED:
        return config
    return {**ADDED[config["strategy"]], **config}


def upgrade_rows(rows: list[dict]) -> tuple[list[dict], int]:
    """The rows with their configs upgraded; how many changed."""
    out = [{**row, "config": upgrade(row.get("config"))} for row in rows]
    return out, sum(a.get("config") != b["config"] for a, b in zip(rows, out, strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path)
    for path in ap.parse_args().files:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        new, done = upgrade_rows(rows)
        if done:
            path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in new), encoding="utf-8")
        print(f"{path}: {done} of {len(rows)} lines given the settings added since", file=sys.stderr)


if __name__ == "__main__":
    main()
