"""The live request cache (a deterministic request sent before is answered from disk, per
model file) and `CachedChat` (the same deterministic request asked once, in memory).

    python -m reflect.model.cache stats   # entries and size, per model file
    python -m reflect.model.cache clear   # delete every entry (`make clear-cache`)

What it answers and what it never does: docs/package.md, "The modules in detail".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CACHED_HEADER = "x-course-cached"
_FORMAT = 1


def deterministic(body: object) -> bool:
    """True when the request's reply does not depend on chance: temperature 0, or a seed."""
    if not isinstance(body, dict):
        return False
    temperature = body.get("temperature")
    return temperature == 0 or body.get("seed") is not None


def request_key(messages: list[dict], role: str, params: Mapping[str, Any]) -> str:
    """The identity of a chat request: its messages, role and every parameter, as canonical JSON
    (the key of `CachedChat` and of a lesson's recorded calls)."""
    return json.dumps(
        [messages, role, dict(params)], sort_keys=True, ensure_ascii=False, default=str
    )


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
    """`python -m reflect.model.cache stats|clear`."""
    from .config import cache_dir

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


@dataclass
class CachedChat:
    """Wraps a chat function; identical temperature-0 requests are answered once and reused.

    With `seeded=True`, sampled requests that carry a `seed` are reused too: on llama.cpp the
    same request with the same seed gives the same reply (hosted APIs promise this only on a
    best-effort basis). `hits` counts the reused answers. Token counts of a reused reply are
    those of the original call, so an evaluator's reported cost is what it would cost alone.

    Safe from several threads: a request already in flight is waited for, not sent twice, so
    the number of model calls (and `hits`) does not depend on how the threads interleave."""

    chat: Callable
    seeded: bool = False
    hits: int = 0
    _memo: dict = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, messages: list[dict], role: str = "critic", **params):
        deterministic = params.get("temperature", 1) == 0 or (
            self.seeded and params.get("seed") is not None
        )
        if not deterministic:
            return self.chat(messages, role=role, **params)
        key = request_key(messages, role, params)
        with self._lock:
            entry = self._memo.get(key)
            if entry is None:
                entry = self._memo[key] = [threading.Lock(), None]
                entry[0].acquire()  # this thread asks the model; others wait for its reply
                owner = True
            else:
                owner = False
                self.hits += 1
        if owner:
            try:
                entry[1] = self.chat(messages, role=role, **params)
            except BaseException:
                with self._lock:
                    del self._memo[key]  # a failed call is not cached: the next caller tries again
                raise
            finally:
                entry[0].release()
            return entry[1]
        with entry[0]:
            pass
        if entry[1] is None:  # the owner's call failed
            with self._lock:
                self.hits -= 1
            return self(messages, role=role, **params)
        return entry[1]


if __name__ == "__main__":
    main()
