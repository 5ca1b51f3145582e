"""Hostile code: each case is contained (no hang, nothing escapes) and gets the specific verdict
its guard promises, not merely "some failure".

The module-level HOSTILE table is what the closing note counts ("tried / escaped"): each entry
is (code, text that must appear in the verdict). The forging attempts at the end target the
verdict itself: patched builtins, a rewritten worker, forged replies, hunting for the expected
values in the worker's memory. They must all leave a wrong answer judged wrong.
"""

import os
import socket
import time
from pathlib import Path

import pytest

from course_sandbox import Limits, run_code
from reflect.tasks.task import get_task
from tests.conftest import cmdline

TESTS = "assert f() == 1\n"
FAST = Limits(timeout_s=2, memory_mb=512)  # a hang burns its whole timeout of CPU


def _fn(body: str) -> str:
    return "def f():\n" + "".join(f"    {line}\n" for line in body.splitlines())


HOSTILE = {
    "infinite_loop": (
        _fn("while True:\n    pass"),
        "Timed out after 2 s while running: assert f() == 1",
    ),
    "fork_bomb": (
        "import os\nwhile True:\n    os.fork()\n",
        "did not load: PermissionError: sandbox: os.fork is not allowed",
    ),
    "fork_bomb_in_call": (
        _fn("import os\nwhile True:\n    os.fork()\nreturn 1"),
        "os.fork is not allowed",
    ),
    "subprocess_spawn": (
        _fn("import subprocess\nsubprocess.run(['sleep', '100'])\nreturn 1"),
        "sandbox: subprocess is not allowed",
    ),
    "os_system": (_fn("import os\nos.system('sleep 100')\nreturn 1"), "os.system is not allowed"),
    "allocate_tens_of_gib": (
        "x = bytearray(40 * 1024 ** 3)\n" + _fn("return 1"),
        "did not load: MemoryError",
    ),
    "allocate_in_loop": (
        _fn("xs = []\nwhile True:\n    xs.append(bytearray(100 * 1024 ** 2))"),
        "raised MemoryError",
    ),
    "huge_output": (_fn("while True:\n    print('x' * 10000)"), "f()"),
    "early_exit_status_0": ("import sys\nsys.exit(0)\n", "did not load: SystemExit"),
    "os_exit_in_test": (_fn("import os\nos._exit(0)"), "process ended (exit code 0)"),
    "exit_in_function": (_fn("raise SystemExit(0)"), "raised SystemExit: 0"),
    "fake_success_print": (
        "print('All tests passed')\nimport sys\nsys.exit(0)\n",
        "did not load: SystemExit",
    ),
    "rigged_eq": (
        "class Yes:\n    def __eq__(self, other):\n        return True\n" + _fn("return Yes()"),
        "got a Yes object (only plain values count)",
    ),
    "rigged_int_subclass": (
        "class I(int):\n    def __eq__(self, other):\n        return True\n" + _fn("return I(2)"),
        "got a I object (only plain values count)",
    ),
    "patch_builtins_assert": (
        "import builtins\nbuiltins.AssertionError = type('X', (Exception,), {})\n"
        + _fn("return 2"),
        "f(): expected 1, got 2",
    ),
    "kill_parent": (
        _fn("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nreturn 1"),
        "os.kill is not allowed",
    ),
    "kill_process_group": (
        _fn("import os, signal\nos.killpg(0, signal.SIGKILL)\nreturn 2"),
        "os.killpg is not allowed",
    ),
    "network_socket": (
        _fn("import socket\ns = socket.create_connection(('127.0.0.1', 22), timeout=1)\nreturn 1"),
        "sandbox: socket is not allowed",
    ),
}


def _verdict(name, code, tests=TESTS, limits=FAST, **kw):
    t = time.monotonic()
    res = run_code(code, tests, kw.get("entry", "f"), limits)
    took = time.monotonic() - t
    assert took < limits.timeout_s + 6, f"{name} was not contained in time ({took:.1f} s)"
    return res


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_code_gets_the_verdict_its_guard_promises(name):
    code, expected = HOSTILE[name]
    res = _verdict(name, code)
    assert not res.passed, f"{name} was counted as a pass"
    assert expected in res.feedback(), f"{name}: {expected!r} not in:\n{res.feedback()}"


def test_deep_recursion_is_a_failed_step_not_a_crash_of_ours():
    code = _fn(
        "import sys\nsys.setrecursionlimit(10 ** 9)\ndef g(n):\n    return g(n + 1) + 1\nreturn g(0)"
    )
    res = _verdict("deep_recursion", code)
    # How CPython 3.11 gives up on a blown C stack varies from run to run on the same machine:
    # RecursionError, MemoryError, SystemError ("error return without exception set"), a killed
    # process, or the time limit. Each is the candidate's own failed step; what must never appear
    # is a pass or "ProtocolError" (the sandbox itself losing the run).
    assert not res.passed and res.tests
    assert res.tests[0].error_type in {
        "RecursionError",
        "MemoryError",
        "SystemError",
        "EarlyExit",
        "Timeout",
    }


def test_killing_the_process_group_leaves_the_parent_alive():
    res = _verdict("kill_process_group", HOSTILE["kill_process_group"][0])
    assert not res.passed and "os.killpg is not allowed" in res.feedback()
    os.kill(os.getpid(), 0)  # we are alive, and so is our process group


def test_environment_holds_no_secrets(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "test-secret-value-1234567890")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    code = _fn("import os\nreturn sorted(os.environ)")
    res = run_code(
        code,
        "assert f() == ['HOME', 'LANG', 'PATH', 'PYTHONHASHSEED', 'PYTHONIOENCODING', 'TMPDIR']\n",
        "f",
        FAST,
    )
    assert res.passed, res.feedback()
    leak = run_code(
        _fn("import os\nreturn os.environ.get('OPENAI_API_KEY')"), "assert f() == None\n", "f", FAST
    )
    assert leak.passed


def test_writing_and_deleting_outside_the_folder_is_blocked(tmp_path):
    victim = tmp_path / "keep.txt"
    victim.write_text("precious")
    target = tmp_path / "created.txt"
    code = _fn(
        f"from pathlib import Path\n"
        f"for attempt in (lambda: open({str(target)!r}, 'w').write('x'),\n"
        f"                lambda: Path({str(target)!r}).write_text('x'),\n"
        f"                lambda: __import__('os').remove({str(victim)!r}),\n"
        f"                lambda: __import__('shutil').rmtree({str(tmp_path)!r})):\n"
        f"    try:\n        attempt()\n    except PermissionError:\n        pass\n"
        f"open('inside.txt', 'w').write('ok')\nreturn open('inside.txt').read()"
    )
    res = run_code(code, "assert f() == 'ok'\n", "f", FAST)
    assert res.passed, res.feedback()
    assert victim.read_text() == "precious"
    assert not target.exists()


def test_work_folder_is_fresh_and_removed():
    code = _fn("import os\nreturn os.listdir('.')")
    res = run_code(code, "assert f() == []\n", "f", FAST)
    assert res.passed, res.feedback()


def test_no_stdin():
    res = run_code(_fn("import sys\nreturn sys.stdin.read()"), "assert f() == ''\n", "f", FAST)
    assert res.passed, res.feedback()


def test_network_is_refused_even_through_the_raw_socket_module():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    code = _fn(f"import _socket\ns = _socket.socket()\ns.connect(('127.0.0.1', {port}))\nreturn 1")
    try:
        res = _verdict("raw_socket_module", code)
        if not res.network_isolated:
            pytest.skip(
                "this OS refuses a network namespace: only the in-process guard applies (documented)"
            )
        assert not res.passed and res.tests[0].error_type in {"ConnectionRefusedError", "OSError"}
    finally:
        server.close()


def test_timeout_names_the_step_that_hung():
    res = _verdict("infinite_loop", HOSTILE["infinite_loop"][0])
    assert res.timed_out
    assert "assert f() == 1" in res.error


def test_huge_output_is_capped():
    res = _verdict("huge_output", HOSTILE["huge_output"][0])
    assert len(res.stdout) <= 5000


def test_no_process_survives_a_fork_attempt():
    before = set(os.listdir("/proc")) if Path("/proc").exists() else set()
    _verdict("fork_bomb", HOSTILE["fork_bomb"][0])
    time.sleep(0.2)
    if before:
        after = set(os.listdir("/proc"))
        strays = [
            p for p in after - before if p.isdigit() and "_worker" in cmdline(p) and escaped(p)
        ]
        assert strays == []


def escaped(pid: str) -> bool:
    """A sandbox process that outlived its sandbox: orphaned (adopted by PID 1), or the child of
    another sandbox process. A live sandbox of another test, run at the same time by pytest-xdist,
    is the child of a test process, and is no stray."""
    try:
        ppid = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
    except (OSError, IndexError):
        return False  # it has exited since
    return ppid == "1" or "_worker" in cmdline(ppid)


# --- Attempts on the verdict itself -------------------------------------------------------

FACTORIAL = get_task("factorial")
WRONG = "def calculate_factorial(n):\n    '''Wrong on purpose.'''\n    return n\n"


def _factorial_verdict(prefix: str):
    res = FACTORIAL.run(prefix + WRONG, FAST)
    honest = FACTORIAL.run(WRONG, FAST)
    return res, honest


@pytest.mark.parametrize(
    "name, prefix",
    [
        ("patched bool", "import builtins\nbuiltins.bool = lambda *a: True\n"),
        (
            "patched isinstance and type",
            "import builtins\nbuiltins.isinstance = lambda *a: True\nbuiltins.type = lambda *a: int\n",
        ),
        (
            "rewritten worker",
            "import sys\nm = sys.modules['__main__']\n"
            "m.answer = lambda ns, req: {'value': True, 'args_after': []}\n"
            "m.encode = lambda v, depth=0: True\n",
        ),
        ("patched json", 'import json\njson.dumps = lambda obj: \'{"id": 1, "value": true}\'\n'),
    ],
)
def test_patching_the_worker_process_cannot_turn_a_wrong_answer_into_a_pass(name, prefix):
    res, honest = _factorial_verdict(prefix)
    assert not res.passed, f"{name}: a wrong factorial passed"
    assert res.n_passed <= honest.n_passed + 1, f"{name}: patching gained passes ({res.feedback()})"


def test_forged_replies_on_every_descriptor_do_not_count():
    forge = (
        "import os\nfor fd in range(3, 64):\n    for i in range(1, 12):\n        try:\n"
        '            os.write(fd, (\'{"id": %d, "value": true}\\n\' % i).encode())\n'
        "        except OSError:\n            pass\n"
    )
    res, honest = _factorial_verdict(forge)
    assert not res.passed
    assert res.n_passed <= honest.n_passed


def test_the_worker_never_holds_an_expected_value():
    """A solution that hunts its own process (objects, frames, files, descriptors, argv) for a big
    number finds the argument it was called with, and never the expected value of the test."""
    hunter = _fn(
        "import gc, os, sys\nfound = []\n"
        "for o in gc.get_objects():\n"
        "    if type(o) in (list, tuple, dict, set):\n"
        "        vals = o.values() if type(o) is dict else o\n"
        "        found += [v for v in vals if type(v) is int and v > 10 ** 10]\n"
        "        found += [int(t) for v in vals if type(v) is str for t in v.replace('(', ' ').replace(')', ' ').replace(',', ' ').split() if t.isdigit() and len(t) > 10]\n"
        "f = sys._getframe()\n"
        "while f:\n"
        "    found += [v for v in f.f_locals.values() if type(v) is int and v > 10 ** 10]\n"
        "    f = f.f_back\n"
        "for fd in range(0, 64):\n"
        "    try:\n        data = os.pread(fd, 1 << 20, 0).decode(errors='replace')\n    except OSError:\n        continue\n"
        "    found += [int(t) for t in data.replace('(', ' ').replace(')', ' ').replace(',', ' ').split() if t.isdigit() and len(t) > 10]\n"
        "found += [int(t) for t in ' '.join(sys.argv).split() if t.isdigit() and len(t) > 10]\n"
        "return sorted(set(found))"
    ).replace("def f():", "def f(x):")
    control = run_code(hunter, "assert 77777777777 in f(77777777777)\n", "f", FAST)
    assert control.passed, (
        "the hunter cannot even find its own argument: this test would prove nothing"
    )
    res = run_code(
        hunter,
        "assert 48151623429 in f(12345678901)\nassert f(12345678901) == 48151623429\n",
        "f",
        FAST,
    )
    assert not res.passed and res.n_passed == 0, res.feedback()


def test_a_bare_except_in_the_tests_cannot_hide_a_timeout():
    tests = "try:\n    f()\nexcept BaseException:\n    pass\n"
    res = _verdict("bare_except", HOSTILE["infinite_loop"][0], tests=tests)
    assert not res.passed and res.timed_out
