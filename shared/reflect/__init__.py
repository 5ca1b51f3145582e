"""reflect: the helper package of the reflection-pattern course.

Folders are layers; a lower one never imports a higher one (tests/test_layers.py checks it):

  records      Step, Verdict, Run, Stop: the one record every strategy returns; Critic, Strategy
  testing      ScriptedChat and FakeReply, scripted stand-ins for a model
  model/       what the package knows of a model: settings, Reply and ModelError, accounting, CachedChat
  tasks/       the course's tasks and HumanEval, with hidden tests and static checks; code out of a reply
  judging/     hidden-test verdicts, critics, critique parsing, sentinels, stop rules, calibration
  memory/      episodic memory across attempts and sessions, in SQLite (lesson 05)
  strategies/  one-shot, maker-checker, scored reflection, graph, Reflexion, resampling: Strategy objects returning a Run
  evaluation/  running strategies over tasks (resumable), stored results, the report

Beside it, not in it, and never imported by it (tests/test_layers.py): `course_runtime` (the local
model's file, its one shared server per user, the fallback build, the disk cache of its replies, the
course's Jupyter kernel, and `connect`, the client with that server, and the replay cassettes: `from course_runtime import connect`),
`course_sandbox` (model-written code run in a separate process, the verdict decided outside it; `Task.run`
finds it through the entry point group `reflect.sandbox`), `course_checks` (the lessons' exercise
checks), `course_notebook` (the lessons' widgets and plots) and `course_bench` (the benchmark's command line).

The names below are imported on first use, so `import reflect` stays fast.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "CachedChat": "model.cache",
    "ConfigError": "model.config",
    "Settings": "model.config",
    "ModelError": "model.llm",
    "Reply": "model.llm",
    "response_format_for": "model.llm",
    "Ledger": "model.accounting",
    "Run": "records",
    "Step": "records",
    "Stop": "records",
    "Verdict": "records",
}
__all__ = [
    "CachedChat",
    "ConfigError",
    "Ledger",
    "ModelError",
    "Reply",
    "Run",
    "Settings",
    "Step",
    "Stop",
    "Verdict",
    "response_format_for",
]


def __getattr__(name: str) -> Any:
    """Import a public name from its layer the first time it is used."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'reflect' has no attribute {name!r}")
    where = _EXPORTS[name]
    value = getattr(import_module(f".{where}", __name__), name)
    globals()[name] = value
    return value


if TYPE_CHECKING:  # for editors and type checkers; never run
    from .model.accounting import Ledger
    from .model.cache import CachedChat
    from .model.config import ConfigError, Settings
    from .model.llm import ModelError, Reply, response_format_for
    from .records import Run, Step, Stop, Verdict
