"""The course's kernel reports no Python version, so a lesson opens unchanged on any Python; the committed
lessons carry none either."""

import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(
    (ROOT / "solutions").glob("*.ipynb")
)


def test_a_started_kernel_of_the_installed_spec_answers_without_a_version(tmp_path, monkeypatch):
    from jupyter_client.manager import start_new_kernel

    subprocess.run(
        [sys.executable, "-m", "course_runtime.kernel", str(tmp_path)], check=True
    )  # as course.py does
    path = tmp_path / "share" / "jupyter" / "kernels" / "python3" / "kernel.json"
    assert (
        json.loads(path.read_text())["argv"][-1]
        == "--IPKernelApp.kernel_class=course_runtime.kernel.CourseKernel"
    )
    monkeypatch.setenv(
        "JUPYTER_PATH", str(tmp_path / "share" / "jupyter")
    )  # searched before any other spec
    manager, client = start_new_kernel(kernel_name="python3", startup_timeout=60)
    try:
        info = client.kernel_info(reply=True, timeout=30)["content"]["language_info"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    assert (
        info["name"] == "python"
        and info["file_extension"] == ".py"
        and info["pygments_lexer"] == "ipython3"
    )
    assert "version" not in info


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_committed_lesson_names_no_python_version(path):
    info = nbformat.read(path, as_version=4).metadata["language_info"]
    assert info["name"] == "python" and "version" not in info, (
        f"{path.name} says Python {info.get('version')}: refresh it with the course's kernel (make notebooks)"
    )
