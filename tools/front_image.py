"""Copy lesson 06's main result, the feedback experiment's curves as the solved lesson's committed output
shows them, to docs/images/results_at_a_glance.png: the front page's figure comes from a lesson's own
output, never drawn separately. The cell is the one marked `# the front page's figure`. Run it after
`make notebooks NB=06` or a re-recording of lesson 06."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "solutions" / "06_does_reflection_pay.ipynb"
OUT = ROOT / "docs" / "images" / "results_at_a_glance.png"


MARK = "# the front page's figure"


def front_png(lesson: Path = LESSON) -> bytes:
    """The PNG output of the lesson's one code cell marked MARK."""
    marked = [
        c
        for c in json.loads(lesson.read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "code" and MARK in "".join(c["source"])
    ]
    if len(marked) != 1:
        raise SystemExit(f"{lesson.name}: {len(marked)} cells marked {MARK!r}, not one")
    for output in marked[0].get("outputs", []):
        if "image/png" in output.get("data", {}):
            return base64.b64decode(output["data"]["image/png"])
    raise SystemExit(
        f"{lesson.name}: no picture in the marked cell's outputs; run `make notebooks NB=06` first"
    )


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(front_png())
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size:,} bytes)", file=sys.stderr)
