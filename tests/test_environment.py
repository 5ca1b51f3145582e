"""environment.yml (conda users) installs exactly what pyproject.toml and the Makefile install."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _env():
    return yaml.safe_load((ROOT / "environment.yml").read_text())


def _makefile_extras() -> set[str]:
    m = re.search(r'pip install --quiet -e "\.\[([a-z,]+)\]"', (ROOT / "Makefile").read_text())
    assert m, "the Makefile no longer installs the project with extras"
    return set(m.group(1).split(","))


def test_conda_env_installs_the_project_with_the_same_extras_as_make():
    deps = _env()["dependencies"]
    pip = next(d["pip"] for d in deps if isinstance(d, dict) and "pip" in d)
    editable = [p for p in pip if p.startswith("-e .")]
    assert len(editable) == 1, "environment.yml must install the project itself (pip: -e .[...])"
    extras = set(re.search(r"\[([a-z,]+)\]", editable[0]).group(1).split(","))
    assert extras == _makefile_extras()
    declared = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    assert extras == declared, "every optional dependency group must be installed by both"


def test_no_conda_package_contradicts_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=!\[ ;]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        names |= {re.split(r"[<>=!\[ ;]", d, maxsplit=1)[0].lower() for d in extra}
    conda = [d for d in _env()["dependencies"] if isinstance(d, str)]
    for dep in conda:
        name = re.split(r"[<>=! ]", dep, maxsplit=1)[0].lower()
        assert name in {"python", "pip"} | names, f"{dep} is in environment.yml but not in pyproject.toml"


def test_python_versions_agree():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    py = next(d for d in _env()["dependencies"] if isinstance(d, str) and d.startswith("python"))
    version = py.split("=")[-1]
    low = re.search(r">=(\d+\.\d+)", project["requires-python"]).group(1)
    high = re.search(r"<(\d+\.\d+)", project["requires-python"]).group(1)
    as_tuple = lambda v: tuple(int(x) for x in v.split("."))  # noqa: E731
    assert as_tuple(low) <= as_tuple(version) < as_tuple(high)
