"""Grade a class's notebooks offline with nbgrader and the course's checks: one table and one feedback file per learner.

    python3 course.py grade DIR [--out build/grades]         # or: make grade DIR=...
    python -m course_grading DIR [--out ...] [--timeout 900] [--cell-timeout 120]

DIR holds one folder per learner, named as the learner, with that learner's lesson notebooks as saved from
notebooks/ (`02_maker_checker.ipynb`, ...); a learner may hand in any of them. For every lesson handed in, the
learner copy of notebooks/ is nbgrader's source (its cells carry nbgrader's metadata, tools/build_exercises.py):
`nbgrader generate_assignment` makes the release once, then for each learner nbgrader's autograde runs the submission
in replay (no network, no model: a request the recording lacks gets an empty reply, COURSE_REPLAY_MISS=empty) and
restores every locked cell, the checks included, from the release, so an edited check cell grades nothing. The
graded exercises are those whose check is a spec (course_checks.spec), graded on made-up cases and scripted models
alone: a learner's own prompts cost nothing. Each learner runs in a copy of the course directory of their own, in
its own process group, under memory and file-size limits and a time limit per notebook; a broken, slow or hostile
submission is graded as failing and the batch goes on.

Out: OUT/grades.csv (learner, lesson, exercise, passed, points, max_points: read from nbgrader's gradebook) and
OUT/feedback/LEARNER.md (each exercise's verdict and message), beside nbgrader's HTML feedback in
OUT/feedback/LEARNER/.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NBGRADER = [sys.executable, "-m", "nbgrader"]
MEMORY_MB, FILE_MB = 6144, 256  # per learner: the kernel and nbgrader together; any file it writes


@dataclass
class Mark:
    learner: str
    lesson: str
    exercise: str
    passed: bool
    points: float
    max_points: float
    message: str = ""


def lessons() -> list[str]:
    return sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))


def graded_checks(lesson: str) -> dict[str, str]:
    """The graded check cells of a lesson's learner copy: grade_id -> exercise key."""
    nb = json.loads((ROOT / "notebooks" / f"{lesson}.ipynb").read_text(encoding="utf-8"))
    out = {}
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") and meta.get("grade_id", "").startswith("check_"):
            out[meta["grade_id"]] = meta["grade_id"].removeprefix("check_").replace("-", ".")
    return out


def _config(cell_timeout: int) -> str:
    return (
        "c = get_config()\n"
        "c.CourseDirectory.root = __import__('os').path.dirname(__import__('os').path.abspath(__file__))\n"
        "c.CourseDirectory.db_url = 'sqlite:///' + c.CourseDirectory.root + '/gradebook.db'\n"
        f"c.Execute.timeout = {cell_timeout}\n"
        "c.ClearSolutions.enforce_metadata = False\n"
    )


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JPY_", "OPENAI_"))}
    env.update(COURSE_BACKEND="replay", COURSE_REPLAY_MISS="empty", COURSE_WORKERS="1")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _run(
    args: list[str], cwd: Path, timeout: float | None = None, limited: bool = False
) -> tuple[int, str]:
    """A command in its own process group (killed whole on timeout), optionally under the memory and file limits."""

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_MB << 20, MEMORY_MB << 20))
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_MB << 20, FILE_MB << 20))

    proc = subprocess.Popen(
        args,
        cwd=cwd,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        preexec_fn=limits if limited else None,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return -1, f"did not finish within {timeout:g} s"
    return proc.returncode, out


def prepare(root: Path, wanted: list[str], cell_timeout: int) -> None:
    """nbgrader's course directory: the learner copies as sources, each released once into the gradebook."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(_config(cell_timeout), encoding="utf-8")
    for lesson in wanted:
        src = root / "source" / lesson
        src.mkdir(parents=True, exist_ok=True)
        nb = json.loads((ROOT / "notebooks" / f"{lesson}.ipynb").read_text(encoding="utf-8"))
        module = f"__import__('course_checks.lesson{lesson[:3].rstrip('_')}', fromlist=['_'])."
        for cell in nb[
            "cells"
        ]:  # the release's checks read no global `ex` a submission could rebind
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
                cell["source"] = "".join(cell["source"]).replace("ex.", module, 1)
        (src / f"{lesson}.ipynb").write_text(json.dumps(nb, indent=1), encoding="utf-8")
        code, out = _run([*NBGRADER, "generate_assignment", lesson, "--force"], root, timeout=600)
        if code != 0:
            raise SystemExit(f"nbgrader generate_assignment {lesson} failed:\n{out[-2000:]}")


def _messages(autograded: Path) -> dict[str, str]:
    """grade_id -> the first line a graded check cell printed (its verdict), from the autograded notebook."""
    if not autograded.exists():
        return {}
    out = {}
    for cell in json.loads(autograded.read_text(encoding="utf-8"))["cells"]:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if not gid.startswith("check_"):
            continue
        text = ""
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                text = (
                    "".join(o.get("text", "")).strip().splitlines()[0]
                    if "".join(o.get("text", "")).strip()
                    else text
                )
            elif o.get("output_type") == "error" and not text:
                text = f"{o.get('ename')}: {o.get('evalue')}"
        out[gid] = text
    return out


def grade_learner(
    template: Path, learner: str, files: list[Path], timeout: float, feedback: Path
) -> list[Mark]:
    """One learner's submissions, graded in a course directory of their own; failures are marks, never stops."""
    marks = []
    with tempfile.TemporaryDirectory(prefix="reflect-grade-") as tmp:
        root = Path(tmp) / "course"
        shutil.copytree(template, root)
        for path in files:
            lesson = path.stem
            checks = graded_checks(lesson)
            why = ""
            try:
                json.loads(path.read_text(encoding="utf-8"))["cells"]
            except (OSError, ValueError, KeyError, TypeError) as err:
                why = f"not a notebook ({type(err).__name__}: {err})"
            if not why:
                dest = root / "submitted" / learner / lesson
                dest.mkdir(parents=True)
                shutil.copyfile(path, dest / f"{lesson}.ipynb")
                code, out = _run(  # autograde, then the HTML feedback of a graded submission
                    [sys.executable, "-m", "course_grading.submission", lesson, learner],
                    root,
                    timeout,
                    limited=True,
                )
                if code != 0:
                    why = (
                        out.strip().splitlines()[-1]
                        if out.strip()
                        else f"nbgrader exited with {code}"
                    )
            scores = {}
            if not why:
                try:
                    scores = _scores(root, lesson, learner)
                except Exception as err:  # noqa: BLE001 - a submission may have destroyed its own course directory
                    why = f"no grades were recorded ({type(err).__name__}: {err})"
            said = _messages(root / "autograded" / learner / lesson / f"{lesson}.ipynb")
            for gid, key in checks.items():
                score, max_score = scores.get(gid, (0.0, 1.0))
                message = why or said.get(gid, "")
                marks.append(
                    Mark(learner, lesson, key, score >= max_score > 0, score, max_score, message)
                )
            if why and not (root / "nbgrader_config.py").exists():
                break  # the course directory is gone: the learner's other lessons cannot be graded either
        html = root / "feedback" / learner
        if html.exists():
            shutil.rmtree(feedback / learner, ignore_errors=True)
            shutil.copytree(html, feedback / learner)
    return marks


def _scores(root: Path, lesson: str, learner: str) -> dict[str, tuple[float, float]]:
    """grade_id -> (score, max score) from nbgrader's gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(lesson, lesson, learner)
        return {g.name: (float(g.score), float(g.max_score)) for g in nb.grades}


def write(marks: list[Mark], out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with (out / "grades.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["learner", "lesson", "exercise", "passed", "points", "max_points"])
        for m in marks:
            w.writerow(
                [m.learner, m.lesson, m.exercise, m.passed, f"{m.points:g}", f"{m.max_points:g}"]
            )
    by: dict[str, list[Mark]] = {}
    for m in marks:
        by.setdefault(m.learner, []).append(m)
    (out / "feedback").mkdir(exist_ok=True)
    for learner, ms in by.items():
        got, total = sum(m.points for m in ms), sum(m.max_points for m in ms)
        lines = [f"# {learner}: {got:g} of {total:g} points", ""]
        for m in ms:
            lines.append(
                f"- {m.lesson} exercise {m.exercise}: {'passed' if m.passed else 'not yet'}. {m.message}"
            )
        (out / "feedback" / f"{learner}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def grade(folder: Path, out: Path, timeout: float, cell_timeout: int) -> list[Mark]:
    if not folder.is_dir():
        raise SystemExit(
            f"{folder} is not a folder: give the folder that holds one folder per learner."
        )
    known = set(lessons())
    learners = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not learners:
        raise SystemExit(
            f"{folder} holds no learner folders (one folder per learner, with their notebooks)."
        )
    handed = {p: sorted(f for f in p.glob("*.ipynb") if f.stem in known) for p in learners}
    wanted = sorted({f.stem for files in handed.values() for f in files})
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="reflect-grade-template-") as tmp:
        template = Path(tmp) / "course"
        prepare(template, wanted, cell_timeout)
        marks: list[Mark] = []
        for path, files in handed.items():
            print(
                f"grading {path.name}: {', '.join(f.stem for f in files) or 'no lesson notebooks'}",
                flush=True,
            )
            marks += grade_learner(template, path.name, files, timeout, out / "feedback")
    write(marks, out)
    print(f"{len(learners)} learners, {len(marks)} marks: {out / 'grades.csv'}")
    return marks


def main() -> None:
    ap = argparse.ArgumentParser(
        prog="python -m course_grading",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("folder", type=Path)
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "grades")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per notebook")
    ap.add_argument("--cell-timeout", type=int, default=120, help="seconds per cell")
    args = ap.parse_args()
    grade(args.folder, args.out, args.timeout, args.cell_timeout)
