"""The live request cache of the local model: a deterministic request sent before to the same model
file is answered from disk instead of the model (`course_runtime.replay.CourseTransport` asks it).

    python -m course_runtime.response_cache stats   # entries and size, per model file
    python -m course_runtime.response_cache clear   # delete every entry (`make clear-cache`)

What it answers and what it never does: docs/package.md, "The modules in detail".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from reflect.model.config import cache_dir

_FORMAT = 1


def model_fingerprint(path: Path) -> str:
    """A short identity of a model file's content: its size and the SHA-256 of its first and last MiB."""
    path = Path(path)
    size = path.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with path.open("rb") as f:
        h.update(f.read(1 << 20))
        f.seek(max(0, size - (1 << 20)))
        h.update(f.read(1 << 20))
    return f"{path.stem[:40]}-{h.hexdigest()[:16]}"


@dataclass
class ResponseCache:
    """The cache of one model file: one JSON file per request, named by the request's hash."""

    root: Path  # the cache folder of all model files
    model: str  # model_fingerprint() of the model file
    hits: int = 0
    stored: int = 0
    _in_flight: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def folder(self) -> Path:
        """This model file's entries."""
        return self.root / self.model

    def _path(self, body: bytes) -> Path:
        digest = hashlib.sha256(self.model.encode() + b"\0" + body).hexdigest()
        return self.folder / f"{digest}.json"

    def get(self, body: bytes) -> tuple[bytes, int] | None:
        """(response body, original latency in ms) for a request body sent before, or None."""
        path = self._path(body)
        if not path.exists():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            if (
                entry["format"] != _FORMAT
                or entry["model"] != self.model
                or entry["request"] != body.decode("utf-8")
            ):
                raise ValueError("it belongs to another request, model or format")
            answer = entry["response"].encode("utf-8"), int(entry["latency_ms"])
            json.loads(answer[0])  # a reply that is not JSON would fail later, in a stranger place
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as err:
            warnings.warn(
                f"ignored a corrupt cache entry {path} ({err}); the model answers instead",
                stacklevel=2,
            )
            return None
        with self._lock:
            self.hits += 1
        return answer

    def put(self, body: bytes, response: bytes, latency_ms: int) -> None:
        """Store a reply (written whole, then renamed into place)."""
        path = self._path(body)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {
            "format": _FORMAT,
            "model": self.model,
            "request": body.decode("utf-8"),
            "response": response.decode("utf-8"),
            "latency_ms": latency_ms,
        }
        tmp = path.with_name(f"{path.name}.{threading.get_ident()}.tmp")
        tmp.write_text(json.dumps(entry, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)
        with self._lock:
            self.stored += 1

    def begin(self) -> None:
        """A request is going to the model."""
        with self._lock:
            self._in_flight += 1

    def end(self) -> bool:
        """That request came back; True when it was the only one in flight all along."""
        with self._lock:
            alone = self._in_flight == 1
            self._in_flight -= 1
            return alone


def stats(root: Path) -> list[tuple[str, int, int]]:
    """(model folder, entries, bytes) for every model file with a cache."""
    root = Path(root)
    out = []
    for folder in sorted(p for p in root.glob("*") if p.is_dir()) if root.exists() else []:
        files = list(folder.glob("*.json"))
        out.append((folder.name, len(files), sum(f.stat().st_size for f in files)))
    return out


def clear(root: Path) -> int:
    """Delete every cached reply; returns how many there were."""
    n = sum(entries for _, entries, _ in stats(root))
    if Path(root).exists():
        shutil.rmtree(root)
    return n


def main() -> None:
    """`python -m course_runtime.response_cache stats|clear`."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("action", choices=("stats", "clear"))
    root = cache_dir() / "responses"
    if ap.parse_args().action == "clear":
        print(f"deleted {clear(root)} cached replies from {root}")
        return
    rows = stats(root)
    for name, entries, size in rows:
        print(f"{name}: {entries} replies, {size / 1e6:.1f} MB")
    print(f"{root}: {sum(r[1] for r in rows)} replies in all")


def for_server(state) -> ResponseCache:
    """The cache of the model file a started server serves (its state's `model_path`)."""
    return ResponseCache(cache_dir() / "responses", model_fingerprint(Path(state.model_path)))


if __name__ == "__main__":
    main()
