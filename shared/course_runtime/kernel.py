"""The course's Python kernel: ipykernel's own, except that it leaves the Python version out of `language_info`.

When a kernel starts, JupyterLab writes the kernel's `language_info` into the notebook it serves. With
ipykernel that includes the interpreter's version ("3.11.7"), so a lesson saved on one Python opened as
modified on every other one, before a learner changed anything. This kernel reports the same fields
without `version`, and the lessons are committed the same way: on Python 3.11 to 3.14 they open
unchanged. (Jupyter prefers an environment's kernels to the user's own in `~/.local/share/jupyter` when
it runs from a virtual environment, as the course's does; a `python3` kernel in JUPYTER_PATH would still
win, and with it a lesson opens modified by that one field again.)

`python -m course_runtime.kernel` registers it as the environment's `python3` kernel (what
`course.py setup` runs after installing ipykernel, which brings its own `python3` spec).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ipykernel.ipkernel import IPythonKernel

_KERNEL_NAME = "python3"


class CourseKernel(IPythonKernel):
    """IPythonKernel whose `language_info` has no interpreter version."""

    language_info = {k: v for k, v in IPythonKernel.language_info.items() if k != "version"}


def spec() -> dict:
    """ipykernel's own kernel.json with this kernel class added; `python` is resolved to the environment's
    interpreter when the kernel starts, as in the spec ipykernel installs."""
    from ipykernel.kernelspec import get_kernel_dict

    # the module by name: run as `python -m`, this file's own __module__ would be "__main__"
    kernel = get_kernel_dict(
        extra_arguments=["--IPKernelApp.kernel_class=course_runtime.kernel.CourseKernel"]
    )
    kernel["argv"][0] = "python"
    return kernel


def install(prefix: Path | None = None) -> Path:
    """Write the spec as `<prefix>/share/jupyter/kernels/python3/kernel.json` (prefix: this environment)."""
    folder = Path(prefix or sys.prefix) / "share" / "jupyter" / "kernels" / _KERNEL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "kernel.json"
    path.write_text(json.dumps(spec(), indent=1) + "\n")
    return path


if __name__ == "__main__":  # python -m course_runtime.kernel [prefix]
    print(
        f"The course's kernel is registered: {install(Path(sys.argv[1]) if len(sys.argv) > 1 else None)}"
    )
