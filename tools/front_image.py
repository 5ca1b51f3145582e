"""Copy lesson 06's cost-quality frontier, as the solved lesson's committed output shows it, to
docs/images/results_at_a_glance.png: the front page's figure comes from a lesson's own output,
never drawn separately. Run it after `make notebooks NB=06` or a re-recording of lesson 06."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "solutions" / "06_does_reflection_pay.ipynb"
OUT = ROOT / "docs" / "images" / "results_at_a_glance.png"


def frontier_png(lesson: Path = LESSON) -> bytes:
    """The PNG output of the cell that draws the frontier (`def frontier(`)."""
    for cell in json.loads(lesson.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code" and "".join(cell["source"]).startswith("def frontier("):
            for output in cell.get("outputs", []):
                if "image/png" in output.get("data", {}):
                    return base64.b64decode(output["data"]["image/png"])
    raise SystemExit(f"{lesson.name}: no frontier plot in its outputs; run `make notebooks NB=06` first")


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(frontier_png())
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size:,} bytes)", file=sys.stderr)
