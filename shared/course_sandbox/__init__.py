"""The sandbox: model-written code runs in a separate, limited process; the verdict is decided here.

See `runner` for the design (a worker that only answers calls, a judge that runs the tests)
and docs/sandbox.md for what it guarantees and what it does not.
"""

from reflect.model.config import require_supported_platform

require_supported_platform()  # before the runner imports `resource`: one clear message on native Windows

from .runner import Limits, Opaque, SandboxResult, TestOutcome, raises, run_code  # noqa: E402

__all__ = ["Limits", "Opaque", "SandboxResult", "TestOutcome", "raises", "run_code"]
