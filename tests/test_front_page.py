"""The front page says only what lesson 06 shows: every number in README's "What you will have measured"
is printed by an output of the solved lesson 06 (its tables, tests and report), and the figure beside it is
that lesson's own output (tools/front_image.py copies it; the test compares the bytes)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "solutions" / "06_does_reflection_pay.ipynb"
SECTION = "## What you will have measured"
# numbers that name things rather than state results: lesson and section numbers, HumanEval's size,
# the model's two sizes, and digits inside a link or a file name
NAMES = re.compile(
    r"lesson \d+|section \d+|sections \d+ and \d+|\d+ HumanEval problems|[01]\.5B|\(docs/[^)]*\)|\[[^\]]*\]"
)


def section(text: str) -> str:
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    return text[start : end if end > 0 else None]


def numbers(text: str) -> list[str]:
    """The numbers a text states as results, as written without thousands separators."""
    return [
        n.replace(",", "")
        for n in re.findall(r"(?<![\w.])\d[\d,]*(?:\.\d+)?", NAMES.sub(" ", text))
    ]


def lesson_outputs(path: Path = LESSON) -> str:
    from tests.test_lesson_claims import output_text

    return output_text(path)


def unsupported(readme: str, outputs: str) -> list[str]:
    printed = set(numbers(outputs)) | {n.lstrip("0") or "0" for n in numbers(outputs)}
    return [n for n in numbers(section(readme)) if n not in printed]


def test_every_number_on_the_front_page_is_printed_by_lesson_06():
    assert unsupported((ROOT / "README.md").read_text(), lesson_outputs()) == []


@pytest.mark.parametrize(
    "planted", ["It solved 73 of HumanEval's first 80 problems", "split 5 to 1 (p = 0.21)"]
)
def test_a_number_the_lesson_never_printed_is_caught(planted):
    readme = (ROOT / "README.md").read_text().replace(SECTION, f"{SECTION}\n\n{planted}.\n")
    assert unsupported(readme, lesson_outputs())


def test_the_front_figure_is_the_lessons_own_output():
    import importlib.util

    spec = importlib.util.spec_from_file_location("front_image", ROOT / "tools" / "front_image.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert (ROOT / "docs" / "images" / "results_at_a_glance.png").read_bytes() == tool.front_png()
