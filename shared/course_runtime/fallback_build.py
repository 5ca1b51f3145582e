"""The fallback engine: llama.cpp's `llama-server` binary, built once into the user cache folder.

The course's default engine is the prebuilt `xllamacpp` wheel (llama.cpp's own server, run
in-process by `course_runtime.server_process`). Where that wheel crashes or fails its first request, the
server manager falls back to this: the same llama.cpp server, compiled from the sources vendored
in the pinned llama-cpp-python sdist with a portable AVX2 build (the native build segfaulted on
an AVX-512/AMX machine; this one worked on every machine seen). Building takes about 5.5 minutes
on 2 cores and happens once: the binary and a stamp naming its version live in the cache folder.

    python -m course_runtime.fallback_build build     # or let the manager do it when it must
    COURSE_LLAMA_SERVER=/path/to/llama-server       # use a binary of your own instead
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from reflect.model.config import ConfigError, cache_dir

SDIST = "llama-cpp-python==0.3.36"  # its vendor/llama.cpp is the pinned llama.cpp
CMAKE_FLAGS = [
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DCMAKE_BUILD_TYPE=Release",
]
MIN_FREE_BYTES = 3 * 1024**3  # sources, objects and the binary, with room to spare
STAMP = {"sdist": SDIST, "flags": CMAKE_FLAGS}


class BuildError(RuntimeError):
    """llama-server cannot be built here; the message says what is missing and what to do."""


def build_dir() -> Path:
    """Where the built binary and its stamp live."""
    return cache_dir() / ("llama-server-" + SDIST.split("==")[1])


def find_binary(env: dict[str, str] | None = None) -> Path | None:
    """COURSE_LLAMA_SERVER if set (it must be an executable), else the built binary, else None."""
    env = os.environ if env is None else env
    own = env.get("COURSE_LLAMA_SERVER")
    if own:
        path = Path(own).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise ConfigError(f"COURSE_LLAMA_SERVER={own} is not an executable file.")
        return path
    binary = build_dir() / "llama-server"
    try:
        stamp = json.loads((build_dir() / "stamp.json").read_text())
    except (OSError, ValueError):
        return None
    return binary if stamp == STAMP and binary.is_file() else None


def _tool(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
        if found:
            return found
    return None


def check_prerequisites(where: Path | None = None) -> tuple[str, str]:
    """cmake and a C++ compiler on PATH, and enough free disk; BuildError naming what is missing."""
    cmake = _tool("cmake")
    if cmake is None:
        raise BuildError(
            "Building llama-server needs cmake, which is not on PATH. Install it "
            "(`pip install cmake`, or `apt install cmake`) and run the cell again."
        )
    cxx = _tool("c++", "g++", "clang++")
    if cxx is None:
        raise BuildError(
            "Building llama-server needs a C++ compiler (g++ or clang++), and none is on "
            "PATH. Install one (`apt install g++`, or Xcode's command line tools)."
        )
    where = where or cache_dir()
    probe = where if where.exists() else where.parent
    while not probe.exists():
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if free < MIN_FREE_BYTES:
        raise BuildError(
            f"Building llama-server needs {MIN_FREE_BYTES / 1024**3:.0f} GB free in {where}; "
            f"{free / 1024**3:.1f} GB are. Free some space, or set COURSE_CACHE_DIR elsewhere."
        )
    return cmake, cxx


def _run(cmd: list[str], what: str, log: Path) -> None:
    with open(log, "ab") as fh:
        done = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-12:])
        raise BuildError(f"{what} failed (exit {done.returncode}). Last lines of {log}:\n{tail}")


def build(say: Callable[[str], None] = print, jobs: int | None = None) -> Path:
    """Download the pinned sdist, build `llama-server` into the cache folder, return its path."""
    cmake, _ = check_prerequisites()
    target = build_dir()
    target.mkdir(parents=True, exist_ok=True)
    log = target / "build.log"
    log.write_text("")
    jobs = jobs or os.cpu_count() or 2
    say(
        f"[reflect] Building llama-server from {SDIST} (once; about 5.5 minutes on 2 cores). Log: {log}"
    )
    with tempfile.TemporaryDirectory(dir=target) as tmp:
        say("[reflect] 1/3 downloading the sources")
        _run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                "--dest",
                tmp,
                SDIST,
            ],
            "Downloading the llama.cpp sources",
            log,
        )
        archive = next(Path(tmp).glob("*.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        src = next(Path(tmp).glob("llama_cpp_python-*")) / "vendor" / "llama.cpp"
        say("[reflect] 2/3 configuring")
        _run(
            [cmake, "-S", str(src), "-B", f"{tmp}/build", *CMAKE_FLAGS],
            "Configuring llama.cpp",
            log,
        )
        say(f"[reflect] 3/3 compiling llama-server with {jobs} jobs (the long step)")
        _run(
            [cmake, "--build", f"{tmp}/build", "--target", "llama-server", "-j", str(jobs)],
            "Compiling llama-server",
            log,
        )
        shutil.copy2(f"{tmp}/build/bin/llama-server", target / "llama-server")
    (target / "stamp.json").write_text(json.dumps(STAMP))
    say(f"[reflect] llama-server is ready: {target / 'llama-server'}")
    return target / "llama-server"


def main(argv: list[str] | None = None) -> None:
    """`python -m course_runtime.fallback_build [build|where]`."""
    args = argv if argv is not None else sys.argv[1:]
    if args[:1] == ["build"]:
        try:
            build()
        except BuildError as err:
            raise SystemExit(str(err)) from None
    else:
        print(find_binary() or "not built (python -m course_runtime.fallback_build build)")


if __name__ == "__main__":
    main()
