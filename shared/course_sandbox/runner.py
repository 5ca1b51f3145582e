"""Run model-written code against tests, with the verdict decided where the code cannot reach.

`run_code(code, tests)` starts a worker process (`_worker.py`) that holds the code and only
answers "call NAME with these arguments"; this module runs the test steps, compares and counts.
What it guarantees and what it does not: docs/sandbox.md; the test forms it supports:
docs/package.md, "The modules in detail".
"""

from __future__ import annotations

import ast
import builtins
import copy
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from reflect.records import compile_tree, parse_python

from ._worker import NotPlain, decode, encode

_WORKER = Path(__file__).with_name("_worker.py")
_OUTPUT_CAP = 4000  # characters of stdout / stderr kept in a result
_LINE_CAP = 64 * 1024 * 1024  # bytes of one reply from the worker
_JUDGED: dict[tuple, SandboxResult] = {}  # (code, tests, entry point, limits, setup) -> verdict
_JUDGED_MAX = 4096


@dataclass(frozen=True)
class Limits:
    """Per run: wall-clock seconds for the whole run, memory, file size, recursion depth."""

    timeout_s: float = 10.0
    memory_mb: int = 1024
    file_mb: int = 16
    recursion_limit: int = 3000


@dataclass
class TestOutcome:
    """One test step: the call, whether it passed, and on failure expected and actual."""

    __test__ = False  # not a pytest class
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
    """The verdict of one run: passed only if every step ran and passed."""

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
        """How many steps passed."""
        return sum(t.passed for t in self.tests)

    @property
    def failures(self) -> list[TestOutcome]:
        """The steps that failed, in order."""
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


class raises:
    """`with raises(ValueError): f(-1)` passes only if that exception type is raised."""

    def __init__(self, exc):
        self.exc = exc


class Opaque:
    """What a call returned when it was not plain data: equal to nothing but itself."""

    def __init__(self, type_name: str):
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


class _Stopped(BaseException):
    """The worker can answer no more (timed out, ended, broke the protocol). A BaseException,
    so a test's own `except Exception` cannot swallow it."""


class _CandidateRaised(Exception):
    """Base of an exception the solution raised whose type has no built-in Exception base."""


def _rebuild_exception(names: list, message: str) -> BaseException:
    """An exception the judge can raise in place of the one raised in the worker: same type
    name and message, and an instance of the first built-in Exception class in its MRO (so
    `except ValueError` catches a solution's `class BadInput(ValueError)`)."""
    names = [n for n in names if type(n) is str][:50] or ["Exception"]
    base = _CandidateRaised
    for n in names:
        cls = getattr(builtins, n, None) if n.isidentifier() else None
        if isinstance(cls, type) and issubclass(cls, Exception):
            base = cls
            break
    name = names[0] if names[0].isidentifier() else "Exception"
    msg = str(message)[:1000]
    cls = type(name, (base,), {"__str__": lambda self: msg, "__module__": "sandbox"})
    err = cls.__new__(cls)
    err.args = (msg,)
    return err


class _Remote:
    """Stands in the judge's namespace for one function of the solution; calls go to the worker."""

    def __init__(self, worker: _Worker, name: str, doc: str | None):
        self._worker = worker
        self.__name__ = name
        self.__doc__ = doc

    def __call__(self, *args, **kwargs):
        return self._worker.call(self.__name__, args, kwargs)

    def __repr__(self) -> str:
        return f"<solution function {self.__name__}>"


def _write_back(arg, after) -> None:
    """Apply a mutation the call made to an argument (lists, dicts, sets, bytearrays) in place."""
    if type(after) is dict and set(after) == {"?"}:
        new = {Opaque(str(after["?"])[:100])}  # it became something that is not plain data
    else:
        new = decode(after)
    if type(arg) is list:
        arg[:] = list(new)
    elif type(arg) is dict:
        arg.clear()
        arg.update(new if type(new) is dict else {Opaque("not a dict"): None})
    elif type(arg) is set:
        arg.clear()
        arg.update(new)
    elif type(arg) is bytearray:
        arg[:] = new if isinstance(new, bytes | bytearray) else b"?"


class _Worker:
    """The judge's end of the two pipes to one worker process, with one deadline for the run."""

    def __init__(self, proc: subprocess.Popen, request_fd: int, reply_fd: int, deadline: float):
        self.proc, self.request_fd, self.reply_fd, self.deadline = (
            proc,
            request_fd,
            reply_fd,
            deadline,
        )
        self.buffer = b""
        self.next_id = 0
        self.stopped: str | None = None  # "timeout" | "ended" | "protocol"
        self.detail = ""

    def stop(self, why: str, detail: str = "") -> _Stopped:
        if self.stopped is None:
            self.stopped, self.detail = why, detail
            _kill_group(self.proc)
        return _Stopped(why)

    def send(self, obj: dict) -> None:
        data = (json.dumps(obj) + "\n").encode()
        while data:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise self.stop("timeout")
            _, ready, _ = select.select([], [self.request_fd], [], remaining)
            if not ready:
                continue
            try:
                n = os.write(self.request_fd, data[:65536])
            except BlockingIOError:
                continue
            except OSError:  # BrokenPipeError: the worker is gone
                raise self.stop("ended") from None
            data = data[n:]

    def receive(self) -> dict:
        while b"\n" not in self.buffer:
            if len(self.buffer) > _LINE_CAP:
                raise self.stop("protocol", "a reply longer than the sandbox reads")
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise self.stop("timeout")
            ready, _, _ = select.select([self.reply_fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.reply_fd, 1 << 16)
            if not chunk:
                try:
                    self.proc.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    pass
                raise self.stop("ended")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):
            raise self.stop(
                "protocol", "the reply channel carried something that is not a reply"
            ) from None
        if type(reply) is not dict:
            raise self.stop("protocol", "the reply channel carried something that is not a reply")
        return reply

    def call(self, name: str, args: tuple, kwargs: dict):
        """Call the solution's `name` in the worker; return its result or raise what it raised."""
        if self.stopped:
            raise _Stopped(self.stopped)
        try:
            wire_args = [encode(a) for a in args]
            wire_kwargs = [[k, encode(v)] for k, v in kwargs.items()]
        except (NotPlain, RecursionError) as err:
            raise TypeError(
                f"the sandbox sends only plain data to the solution, not {err}"
            ) from None
        self.next_id += 1
        self.send({"id": self.next_id, "name": name, "args": wire_args, "kwargs": wire_kwargs})
        reply = self.receive()
        if reply.get("id") != self.next_id or "error" in reply:
            raise self.stop("protocol", str(reply.get("error") or "a reply out of turn"))
        try:
            after = reply.get("args_after") or []
            for arg, new in zip(args, after, strict=False):
                if new is not None:  # None: unchanged
                    _write_back(arg, new)
            if "raised" in reply:
                outcome = _rebuild_exception(list(reply["raised"]), reply.get("message", ""))
            elif "not_plain" in reply:
                outcome = Opaque(str(reply["not_plain"])[:100])
            else:
                outcome = decode(reply["value"])
        except (KeyError, ValueError, TypeError, RecursionError) as err:
            raise self.stop(
                "protocol", f"a reply the sandbox cannot read ({type(err).__name__})"
            ) from None
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def _child_env(workdir: str) -> dict[str, str]:
    """A minimal environment: nothing inherited but a PATH; no keys, no tokens."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONIOENCODING": "utf-8",
    }


def run_code(
    code: str,
    tests: str,
    entry_point: str | None = None,
    limits: Limits | None = None,
    setup: str = "",
) -> SandboxResult:
    """Run the test steps in `tests` against `code`, the code in a fresh sandbox process.

    `tests` is Python source: top-level statements (each one a step: `assert f(2) == 4`,
    `with raises(ValueError): f(-1)`), or a HumanEval-style `def check(candidate): ...`
    whose body statements are the steps. With `entry_point`, `candidate` names that function.
    `setup` is trusted code run on the judge's side first (HumanEval's prompt, whose helper
    functions such as `poly` its tests use); the solution's functions are never taken from it.
    The same code against the same tests is run once per process: a draft sent back unchanged,
    or judged again by a later cell, gets a copy of its first verdict (a hang costs its timeout
    once).
    """
    limits = limits or Limits()
    key = (code, tests, entry_point, limits, setup)
    if key not in _JUDGED:
        if len(_JUDGED) >= _JUDGED_MAX:
            _JUDGED.clear()
        _JUDGED[key] = _run(code, tests, entry_point, limits, setup)
    return copy.deepcopy(_JUDGED[key])


def _run(code: str, tests: str, entry_point: str | None, limits: Limits, setup: str):
    start = time.perf_counter()
    deadline = time.monotonic() + limits.timeout_s
    with (
        tempfile.TemporaryDirectory(prefix="reflect-sandbox-") as work,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-I", str(_WORKER), str(req_r), str(rep_w)],
                cwd=work,
                env=_child_env(work),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                pass_fds=(req_r, rep_w),
                start_new_session=True,
                close_fds=True,
            )
        finally:
            os.close(req_r)
            os.close(rep_w)
        os.set_blocking(req_w, False)  # a full pipe must not block past the deadline
        worker = _Worker(proc, req_w, rep_r, deadline)
        try:
            res = _judge(worker, code, tests, entry_point, limits, setup)
        finally:
            os.close(req_w)  # end of requests: the worker exits
            _kill_group(proc)
            os.close(rep_r)
        out.seek(0)
        err.seek(0)
        stdout = out.read(_OUTPUT_CAP * 4).decode("utf-8", errors="replace")
        stderr = err.read(_OUTPUT_CAP * 4).decode("utf-8", errors="replace")
    res.duration_s = time.perf_counter() - start
    res.exit_code = proc.returncode
    res.stdout, res.stderr = _cap(stdout), _cap(stderr)
    return res


def _judge(
    worker: _Worker, code: str, tests: str, entry_point: str | None, limits: Limits, setup: str
) -> SandboxResult:
    def stopped(current: str | None, tests_so_far: list[TestOutcome]) -> SandboxResult:
        code_ = worker.proc.returncode
        if worker.stopped == "timeout":
            where = f" while running: {current}" if current else ""
            error = f"Timed out after {limits.timeout_s:g} s{where} (infinite loop or too slow)."
            if current:
                tests_so_far.append(
                    TestOutcome(current, False, actual="timed out", error_type="Timeout")
                )
            return SandboxResult(False, tests_so_far, True, error=error)
        if worker.stopped == "ended":
            where = f" during: {current}" if current else " before the tests finished"
            error = f"The process ended (exit code {code_}){where}; exiting early is not a pass."
            if current:
                tests_so_far.append(
                    TestOutcome(
                        current,
                        False,
                        actual=f"process ended (exit code {code_})",
                        error_type="EarlyExit",
                    )
                )
            return SandboxResult(False, tests_so_far, error=error)
        error = f"The sandbox stopped the run: {worker.detail}; the run does not count."
        if current:
            tests_so_far.append(
                TestOutcome(current, False, actual=worker.detail, error_type="ProtocolError")
            )
        return SandboxResult(False, tests_so_far, error=error)

    try:
        worker.send(
            {
                "code": code,
                "memory_mb": limits.memory_mb,
                "cpu_seconds": int(limits.timeout_s) + 1,
                "file_mb": limits.file_mb,
                "recursion_limit": limits.recursion_limit,
            }
        )
        hello = worker.receive()
    except _Stopped:
        return stopped(None, [])
    if hello.get("event") == "load_error":
        return SandboxResult(
            False, error=f"The code did not load: {hello.get('error_type')}: {hello.get('message')}"
        )
    functions = hello.get("functions")
    if hello.get("event") != "loaded" or type(functions) is not dict:
        worker.stop("protocol", "the worker's first reply was not a load report")
        return stopped(None, [])
    isolated = bool(hello.get("network_isolated"))
    if entry_point and entry_point not in functions:
        return SandboxResult(
            False,
            error=f"The code did not load: NameError: no function named {entry_point!r} was defined",
            network_isolated=isolated,
        )

    ns: dict = {"__name__": "tests", "raises": raises}
    if setup:
        exec(compile(setup, "setup.py", "exec"), ns)  # trusted: the task's own helpers
    for name, info in functions.items():
        if type(name) is str and (name not in ns or name == entry_point):
            doc = info.get("doc") if type(info) is dict else None
            ns[name] = _Remote(worker, name, doc if type(doc) is str else None)
    if entry_point:
        ns["candidate"] = ns[entry_point]

    tree = parse_python(tests)
    steps: list[ast.stmt] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            steps.extend(node.body)  # HumanEval: the body of check(candidate) is the step list
        elif (
            isinstance(
                node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign)
            )
            and not steps
        ):
            try:
                exec(compile_tree(ast.Module([node], []), "tests.py", "exec"), ns)
            except _Stopped:
                return stopped(None, [])
            except Exception as err:  # noqa: BLE001 - e.g. a setup line that calls the solution
                return SandboxResult(
                    False,
                    error=f"The test setup failed: {short(err, 200)}",
                    network_isolated=isolated,
                )
        else:
            steps.append(node)
    outcomes: list[TestOutcome] = []
    for node in steps:
        current = _segment(tests, node)
        try:
            out = _run_step(node, ns, tests)
        except _Stopped:
            out = None
        if worker.stopped:  # checked after every step: a test's bare `except:` cannot hide a stop
            return stopped(current, outcomes)
        outcomes.append(
            TestOutcome(
                out.get("call", "?"),
                bool(out.get("passed")),
                out.get("expected"),
                out.get("actual"),
                out.get("error_type"),
                out.get("message"),
            )
        )
    passed = len(outcomes) > 0 and all(t.passed for t in outcomes)
    return SandboxResult(passed, outcomes, network_isolated=isolated)


def _cap(text: str) -> str:
    return (
        text
        if len(text) <= _OUTPUT_CAP
        else text[:_OUTPUT_CAP] + f"\n... [truncated, {len(text)}+ characters]"
    )


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the worker and anything it started (same process group), and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for _ in range(50):  # strays it started, still in its group after the worker is reaped
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            break
        time.sleep(0.01)


def short(value, limit: int = 300) -> str:
    """A one-line text of a value or exception, cut to `limit` characters."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, BaseException):
        text = f"{type(value).__name__}: {value}"
    else:
        text = _safe_repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _safe_repr(value) -> str:
    """repr() that never raises."""
    try:
        return repr(value)
    except BaseException as err:  # noqa: BLE001
        return f"<unrepresentable {type(value).__name__}: {type(err).__name__}>"


def _segment(src: str, node: ast.AST) -> str:
    """The source of one test step, on one line."""
    text = ast.get_source_segment(src, node) or ast.unparse(node)
    return short(" ".join(text.split()), 200)


def _run_step(node: ast.stmt, ns: dict, src: str) -> dict:
    """Run one test step in the judge's namespace; the outcome as a dict (call, passed, ...)."""

    def ev(expr):
        return eval(compile_tree(ast.Expression(expr), "tests.py", "eval"), ns)

    try:
        if (
            isinstance(node, ast.With)
            and len(node.items) == 1
            and isinstance(node.items[0].context_expr, ast.Call)
            and getattr(node.items[0].context_expr.func, "id", None) == "raises"
        ):
            exc = ev(node.items[0].context_expr.args[0])
            names = exc.__name__ if isinstance(exc, type) else " or ".join(e.__name__ for e in exc)
            call = _segment(src, node.body[0])
            try:
                if isinstance(node.body[0], ast.Expr) and len(node.body) == 1:
                    got = ev(node.body[0].value)
                else:
                    exec(compile_tree(ast.Module(node.body, []), "tests.py", "exec"), ns)
                    got = None
            except exc:
                return {"passed": True, "call": call}
            except Exception as err:  # noqa: BLE001 - any other exception is a wrong answer
                return {
                    "passed": False,
                    "call": call,
                    "expected": f"raises {names}",
                    "actual": f"raised {type(err).__name__}: {short(str(err), 150)}",
                    "error_type": type(err).__name__,
                }
            return {
                "passed": False,
                "call": call,
                "expected": f"raises {names}",
                "actual": f"returned {short(got, 150)} without raising",
                "error_type": "DidNotRaise",
            }
        if (
            isinstance(node, ast.Assert)
            and isinstance(node.test, ast.Compare)
            and len(node.test.ops) == 1
            and isinstance(node.test.ops[0], ast.Eq)
        ):
            call = _segment(src, node.test.left)
            expected = ev(node.test.comparators[0])
            actual = ev(node.test.left)
            if isinstance(actual, Opaque):
                return {
                    "passed": False,
                    "call": call,
                    "expected": short(expected, 150),
                    "actual": f"a {actual.type_name} object (only plain values count)",
                    "error_type": "NotPlain",
                }
            ok = bool(expected == actual)
            out = {"passed": ok, "call": call}
            if not ok:
                out.update(
                    expected=short(expected, 150),
                    actual=short(actual, 150),
                    error_type="AssertionError",
                )
            return out
        if isinstance(node, ast.Assert):
            call = _segment(src, node.test)
            ok = bool(ev(node.test))
            out = {"passed": ok, "call": call}
            if not ok:
                out.update(actual="the assertion is false", error_type="AssertionError")
                if node.msg is not None:
                    out["message"] = short(str(ev(node.msg)), 150)
            return out
        exec(compile_tree(ast.Module([node], []), "tests.py", "exec"), ns)
        return {"passed": True, "call": _segment(src, node)}
    except Exception as err:  # noqa: BLE001 - RecursionError, the solution's own exceptions: a failed step
        return {
            "passed": False,
            "call": _segment(src, node),
            "error_type": type(err).__name__,
            "actual": f"raised {type(err).__name__}: {short(str(err), 150)}",
        }
