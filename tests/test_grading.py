"""`course.py grade` end to end (course_grading): nbgrader grades a class folder of lesson 00 submissions offline with
the course's checks, and the table holds exactly the expected marks: a complete submission with a prompt of its own
(not in the recording), an unfinished one (an answer left blank, a cell that raises, another that never ends), one
of the planted wrong answers whose check cells were edited to print a pass (and that rebinds `ex`), and one that
deletes its own course directory; none stops the batch or changes another learner's marks."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSON = "00_first_call"
EXERCISES = ("00.1", "00.2", "00.3", "00.4")

pytest.importorskip("nbgrader")

import course_grading as grading  # noqa: E402


def _solutions() -> dict[str, dict]:
    nb = json.loads((ROOT / "solutions" / f"{LESSON}.ipynb").read_text(encoding="utf-8"))
    return {
        c["metadata"]["reflect"]["key"]: c
        for c in nb["cells"]
        if c["metadata"].get("reflect", {}).get("key")
    }


def submission(answers: dict[str, str] | None = None, check: str | None = None) -> dict:
    """The learner copy with every answer cell filled from solutions/ (or answers[key]; None leaves the
    placeholder); `check` replaces every graded check cell's source."""
    nb = json.loads((ROOT / "notebooks" / f"{LESSON}.ipynb").read_text(encoding="utf-8"))
    solved = _solutions()
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        gid = meta.get("grade_id", "")
        if gid.startswith("answer_"):
            key = gid.removeprefix("answer_").replace("-", ".")
            given = (answers or {}).get(key, "".join(solved[key]["source"]))
            if given is not None:
                cell["source"] = given
        elif meta.get("grade") and check is not None:
            cell["source"] = check
    return nb


def _planted(key: str) -> str:
    return _solutions()[key]["metadata"]["reflect"]["planted"][0]["source"]


# a submission that finds the course directory it is graded in (where nbgrader keeps gradebook.db) and deletes it
HOSTILE = (
    "import os, shutil\n"
    "here = os.getcwd()\n"
    "while here != '/' and not os.path.exists(os.path.join(here, 'gradebook.db')):\n"
    "    here = os.path.dirname(here)\n"
    "if here != '/':\n"
    "    shutil.rmtree(here, ignore_errors=True)\n"
)


def test_a_class_folder_is_graded_into_one_table_and_a_feedback_file_each(tmp_path):
    solved = {k: "".join(c["source"]) for k, c in _solutions().items()}
    own_prompt = solved["00.1"].replace(
        "Answer with a single integer and nothing else: no words, no punctuation.",
        "Reply with one number only.",
    )
    assert own_prompt != solved["00.1"]
    learners = {  # the solved lesson with a prompt of the learner's own: graded offline, it costs nothing
        "complete": submission({"00.1": own_prompt}),
        "unfinished": submission(  # one answer left as it was, one cell raises, another never ends (it waits:
            {  # the timeout is the same, no core spent)
                "00.1": None,
                "00.2": "raise RuntimeError('my bill is not ready')\n" + solved["00.2"],
                "00.4": "import time\n\nwhile True:\n    time.sleep(0.5)\n" + solved["00.4"],
            }
        ),
        "edited_checks": submission(  # the planted wrong answers, and checks edited to print ✅
            {
                **{k: _planted(k) for k in EXERCISES},
                "00.4": _planted("00.4")
                + "\n\nclass ex:\n    def __getattr__(self, name):\n        return lambda *a: print('✅')\n\n\nex = ex()\n",
            },
            check="print('✅ passed')",
        ),
        "hostile": submission({"00.2": HOSTILE + solved["00.2"]}),
    }
    folder = tmp_path / "class"
    for name, nb in learners.items():
        (folder / name).mkdir(parents=True)
        (folder / name / f"{LESSON}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    (folder / "complete" / "notes.txt").write_text("not a lesson", encoding="utf-8")
    out = tmp_path / "grades"

    grading.grade(folder, out, timeout=240, cell_timeout=10)

    with (out / "grades.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    got = {(r["learner"], r["exercise"]): r["passed"] == "True" for r in rows}
    passed = {
        "complete": EXERCISES,
        "unfinished": ("00.3",),
        "edited_checks": (),
        "hostile": None,  # its own grading data are gone: every mark fails, nobody else's
    }
    want = {
        (name, key): (keys is not None and key in keys)
        for name, keys in passed.items()
        for key in EXERCISES
    }
    assert got == want
    assert {r["points"] for r in rows} <= {"0", "1"} and {r["max_points"] for r in rows} == {"1"}
    for name in learners:
        text = (out / "feedback" / f"{name}.md").read_text(encoding="utf-8")
        assert text.startswith(f"# {name}: {len(passed[name] or ())} of 4 points"), text
    assert (
        "ex.NAME" not in (out / "feedback" / "edited_checks.md").read_text()
        and "❌" in (out / "feedback" / "edited_checks.md").read_text()
    )
    assert (out / "feedback" / "complete").is_dir()  # nbgrader's own HTML feedback beside the table
