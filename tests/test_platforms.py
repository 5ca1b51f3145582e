"""The course on a platform it does not support: native Windows stops at once with one message that names
WSL2 and the command that installs it, before a lesson cell can fail on a missing POSIX call. Simulated here
in a fresh interpreter whose `sys.platform` says "win32" and which has no `resource` module and no
`os.killpg`, as native Windows Python has none."""

from __future__ import annotations

import subprocess
import sys

import pytest

from reflect.model.config import WINDOWS_MESSAGE, UnsupportedPlatform, require_supported_platform

# The standard library modules that pick their Windows code at import time (shutil on Python 3.13+ imports
# _winapi) are loaded first, as the real ones: only the course's own imports run under the faked platform.
STDLIB_FIRST = "import shutil, subprocess, sysconfig, tempfile, platform, pathlib\n"
AS_WINDOWS = (
    "import os, sys; sys.platform = 'win32'; sys.modules['resource'] = None; del os.killpg\n"
)


def as_windows(code: str, before: str = "") -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter that looks like native Windows (after `before`, run as it is)."""
    return subprocess.run(
        [sys.executable, "-c", STDLIB_FIRST + before + AS_WINDOWS + code],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "before, code",
    [
        ("", "import course_sandbox"),  # what a lesson's imports reach first (tasks, judging)
        # the package imports no sandbox: the first run of model code loads it (the entry point reflect.sandbox)
        ("", "from reflect.tasks import get_task\nget_task('factorial').run('x = 1')"),
        # every lesson's first model cell; its libraries are imported first, since a faked sys.platform
        # would send their own import-time platform checks (sysconfig) to Windows files this machine lacks
        ("from course_runtime import connect\n", "connect('00_first_call')"),
    ],
)
def test_native_windows_stops_with_the_wsl_message_before_anything_else_fails(before, code):
    done = as_windows(code, before)
    assert done.returncode != 0
    assert (
        "UnsupportedPlatform" in done.stderr
        and "wsl --install" in done.stderr
        and "WSL2" in done.stderr
    )
    assert (
        "ImportError" not in done.stderr and "ModuleNotFoundError" not in done.stderr
    )  # the message, nothing before it


def test_linux_and_macos_pass_the_check():
    for platform in ("linux", "darwin"):
        require_supported_platform(platform)
    with pytest.raises(UnsupportedPlatform, match="wsl --install"):
        require_supported_platform("win32")
    assert "Linux or macOS" in WINDOWS_MESSAGE
