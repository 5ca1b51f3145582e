"""The nbval run of the solved lessons: in replay, and every exercise's check graded like code.

The lessons' kernels start with COURSE_BACKEND=replay (unless it is set already), so every model
call is answered from the committed cassettes, never a live call.

nbval runs each solution notebook in one kernel and compares every cell's output with the
committed one, the check cells' "✅" included. After each check cell this plugin adds one test,
run in the same kernel: the check cell as the class grader runs it (`nbgrader autograde`, NBGRADER_EXECUTION)
must pass the solution; then each planted wrong answer (`metadata.reflect.planted`, kept beside the
exercise) and then the learner copy's placeholder replace the solution, each from the solution's
state, and the check must say "Not yet" (the placeholder with a hint); then the solution's names
are restored, so the rest of the lesson runs on the solution's state. Planted answers and
placeholders make no model call (a replayed call plays once).

The lessons run once for both: `pytest --nbval solutions` (as `make test` runs it) loads this
plugin through the repository's conftest.py.
"""

import os
import textwrap
from queue import Empty

import pytest

SNAPSHOT = "_exercise_snapshot = dict(globals())"
ROLLBACK = (
    "[globals().pop(k) for k in [k for k in globals() if k not in _exercise_snapshot and k != '_exercise_snapshot']]\n"
    "globals().update(_exercise_snapshot)\n"
    "from course_checks import reset_hints as _reset_hints\n_reset_hints()\ndel _reset_hints"
)
RESTORE = ROLLBACK + "\ndel _exercise_snapshot"
TIMEOUT = 900
# the check cell as `nbgrader autograde` runs it (course_checks.Exercise.grade), in the solution's state
GRADED = (
    "import os as _os\n_os.environ['NBGRADER_EXECUTION'] = 'autograde'\ntry:\n{check}\n"
    "finally:\n    del _os.environ['NBGRADER_EXECUTION'], _os"
)


def run_in(kernel, source: str) -> str:
    """Run `source` in nbval's kernel; what it printed, returned, or raised, as text."""
    msg_id = kernel.execute_cell_input(source, allow_stdin=False)
    kernel.await_reply(msg_id, timeout=TIMEOUT)
    parts = []
    while True:
        try:
            msg = kernel.get_message("iopub", timeout=TIMEOUT)
        except Empty:
            raise RuntimeError(f"no output from the kernel for {TIMEOUT} s") from None
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "status" and content["execution_state"] == "idle":
            return "".join(parts)
        if kind == "stream":
            parts.append(content["text"])
        elif kind == "error":
            parts.append(f"{content['ename']}: {content['evalue']}")
        elif kind in ("execute_result", "display_data") and "text/plain" in content["data"]:
            parts.append(content["data"]["text/plain"])


class WrongAnswers(pytest.Item):
    """The planted answers and the placeholder of one exercise, each failed by its check."""

    def __init__(self, *, exercise, check: str, **kwargs):
        super().__init__(**kwargs)
        self.exercise, self.check = exercise, check

    def runtest(self):
        kernel = self.parent.kernel
        meta = self.exercise.metadata["reflect"]
        graded = run_in(kernel, GRADED.format(check=textwrap.indent(self.check, "    ")))
        assert graded.startswith("✅"), f"the solution fails as a grader grades it: {graded[:300]}"
        run_in(kernel, SNAPSHOT)
        try:
            for planted in meta["planted"]:
                run_in(kernel, planted["source"])
                verdict = run_in(kernel, self.check)
                assert verdict.startswith("❌ Not yet."), (
                    f"planted answer ({planted['why']}) is not failed: {verdict[:300]}"
                )
                run_in(kernel, ROLLBACK)  # each planted answer starts from the solution's state
            run_in(kernel, meta["placeholder"])
            verdict = run_in(kernel, self.check)
            assert verdict.startswith("❌ Not yet.") and "Hint 1 of" in verdict, (
                f"the placeholder is not failed with a hint: {verdict[:300]}"
            )
        finally:
            run_in(kernel, RESTORE)

    def reportinfo(self):
        return self.path, None, f"{self.name} ({self.exercise.metadata['reflect']['key']})"


def nbval_class(name: str) -> type:
    """nbval's notebook (IPyNbFile) or cell (IPyNbCell) item class; a class nothing is an instance of
    where nbval is not installed."""
    try:
        import nbval.plugin
    except ImportError:
        return type(name, (), {})
    return getattr(nbval.plugin, name)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    """A lesson's kernel starts in replay."""
    if "COURSE_BACKEND" in os.environ or not isinstance(item.parent, nbval_class("IPyNbFile")):
        return (yield)
    os.environ["COURSE_BACKEND"] = "replay"
    try:
        return (yield)
    finally:
        del os.environ["COURSE_BACKEND"]


def pytest_collection_modifyitems(session, config, items):
    """After each exercise's check cell, the test of its wrong answers (nbval's items only)."""
    IPyNbCell = nbval_class("IPyNbCell")
    out, exercise = [], None
    for item in items:
        out.append(item)
        if not isinstance(item, IPyNbCell):
            continue
        if "placeholder" in item.cell.metadata.get("reflect", {}):
            exercise = item.cell
        elif exercise is not None:  # the next code cell is the exercise's check
            out.append(
                WrongAnswers.from_parent(
                    item.parent,
                    name=f"{item.name} wrong answers",
                    exercise=exercise,
                    check=item.cell.source,
                )
            )
            exercise = None
    items[:] = out
