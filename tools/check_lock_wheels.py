"""Does every package in requirements/lock.txt have a wheel for each platform and Python the course names?

    python tools/check_lock_wheels.py          # asks PyPI's simple index (JSON); prints what is missing

For each pinned version: a pure wheel (py3-none-any), or one wheel per (CPython 3.11-3.14, platform) for
manylinux x86-64, macOS arm64 and Windows amd64 (abi3 wheels count for every Python from theirs). A pin
whose marker keeps it off a platform (pywinpty is Windows-only) is only asked for there. Exit 1 if any
wheel is missing. The answer backs the README's "every locked package has their wheels".
"""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packaging.markers import Marker
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

LOCK = Path(__file__).resolve().parents[1] / "requirements" / "lock.txt"
PYTHONS = ("3.11", "3.12", "3.13", "3.14")
PLATFORMS = {  # name: (sys_platform, os_name, a wheel platform tag must contain one of these)
    "linux x86-64": ("linux", "posix", ("manylinux",)),
    "macOS arm64": ("darwin", "posix", ("macosx",)),
    "Windows amd64": ("win32", "nt", ("win_amd64",)),
}


def pins(with_text: bool = False) -> list[tuple]:
    """(name, version, marker) for every pin in the lock, in its order; with_text adds the pin's whole entry."""
    out = []
    for block in re.split(r"\n(?=\S)", LOCK.read_text()):
        m = re.match(r"([A-Za-z0-9_.-]+)==([^ ;\\]+)\s*(?:;\s*([^\\]+))?", block)
        if m:
            out.append(
                (
                    m.group(1),
                    m.group(2),
                    (m.group(3) or "").strip(),
                    *([block] if with_text else []),
                )
            )
    return out


def files(name: str) -> list[str]:
    req = urllib.request.Request(
        f"https://pypi.org/simple/{canonicalize_name(name)}/",
        headers={"Accept": "application/vnd.pypi.simple.v1+json"},
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        return [f["filename"] for f in json.load(r)["files"]]


def fits(tag, python: str, platform: str) -> bool:
    cp = "cp" + python.replace(".", "")
    arch_ok = (
        "x86_64" in tag.platform
        if platform == "linux x86-64"
        else ("arm64" in tag.platform or "universal2" in tag.platform)
        if platform == "macOS arm64"
        else True
    )
    plat_ok = tag.platform == "any" or (
        any(k in tag.platform for k in PLATFORMS[platform][2]) and arch_ok
    )
    if (
        tag.interpreter in ("py3", "py2.py3")
        or tag.abi == "none"
        and tag.interpreter.startswith("py")
    ):
        return plat_ok
    if tag.abi == "abi3":
        return plat_ok and int(tag.interpreter[2:]) <= int(cp[2:])
    return plat_ok and tag.interpreter == cp


def missing_for(pin: tuple[str, str, str]) -> list[str]:
    name, version, marker = pin
    wheels = []
    for f in files(name):
        if f.endswith(".whl"):
            try:
                wname, wversion, _, tags = parse_wheel_filename(f)
            except InvalidWheelFilename:  # old uploads with tags of their own making
                continue
            if wname == canonicalize_name(name) and str(wversion) == version:
                wheels.append(tags)
    gaps = []
    for platform, (sys_platform, os_name, _) in PLATFORMS.items():
        for python in PYTHONS:
            env = {
                "python_version": python,
                "python_full_version": python + ".0",
                "sys_platform": sys_platform,
                "os_name": os_name,
                "implementation_name": "cpython",
            }
            if marker and not Marker(marker).evaluate(env):
                continue
            if not any(fits(t, python, platform) for tags in wheels for t in tags):
                gaps.append(f"{platform}/{python}")
    return gaps


def main() -> int:
    locked = pins()
    with ThreadPoolExecutor(8) as pool:
        gaps = dict(zip([p[:2] for p in locked], pool.map(missing_for, locked), strict=True))
    bad = {k: v for k, v in gaps.items() if v}
    for (name, version), where in bad.items():
        print(f"{name}=={version}: no wheel for {', '.join(where)}")
    print(
        f"{len(locked) - len(bad)} of {len(locked)} pins have a wheel for every platform and Python they apply to"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
