"""The fresh learner reads' answers (tests/answers/<lesson>.json: answers nobody on the team wrote, each
labelled wrong or right by the lesson's statement), tried in their lessons' kernels by tools/try_answers.py: every
wrong one fails its check, every right one passes. Slow (each lesson runs whole in replay): `make
test-integration` runs them, `make test` does not."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.answers
ROOT = Path(__file__).resolve().parents[1]
ANSWERS = sorted((ROOT / "tests" / "answers").glob("*.json"))


def _tool():  # noqa: ANN202 - tools/ is no package
    spec = importlib.util.spec_from_file_location("try_answers", ROOT / "tools" / "try_answers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_lesson_has_its_answers():
    assert [p.stem for p in ANSWERS] == ["00", "01", "02", "03", "03b", "04", "05", "06"]


@pytest.mark.parametrize("path", ANSWERS, ids=lambda p: p.stem)
def test_each_wrong_answer_fails_and_each_right_one_passes(path):
    tool = _tool()
    results = tool.try_answers(path.stem, json.loads(path.read_text(encoding="utf-8")))
    wanted = sum(len(v) for v in json.loads(path.read_text(encoding="utf-8")).values())
    assert len(results) == wanted, "an exercise's answers were not all tried"
    wrong = [
        f"{r['key']} {r['kind']} ({r['why']}): {r['verdict'][:150]}" for r in tool.failures(results)
    ]
    assert not wrong, "\n".join(wrong)
