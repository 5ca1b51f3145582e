"""Record and replay model calls, one readable YAML cassette per notebook (vcrpy's format).

A request is matched on its whole body, so a changed prompt is a miss: `ReplayMiss`, or, in a notebook
a person opened in Jupyter with the local model there, an answer from that model (`LiveFallback`, in
`course_runtime.client`; `Settings.replay_miss`). A request asked more often than it was recorded replays
its last recording again (a re-run cell). How matching, secrets, latency and re-recording work:
docs/replay.md and docs/package.md, "The modules in detail".
"""

from __future__ import annotations

import difflib
import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from reflect.model.cache import CACHED_HEADER, deterministic

LATENCY_HEADER = "x-course-latency-ms"
REPLAYED_HEADER = "x-course-replayed"  # on a response answered from the cassette
ROLE_HEADER = "x-course-role"
BACKEND_HEADER = "x-course-backend"
_KEEP_REQUEST_HEADERS = {"content-type", ROLE_HEADER, BACKEND_HEADER}
_KEEP_RESPONSE_HEADERS = {"content-type", LATENCY_HEADER}

_OPEN: dict[Path, Recorder] = {}  # the recorder of each cassette open in this process
_OPEN_LOCK = threading.Lock()


def close_all() -> None:
    """Close every open cassette (tests call this between cases)."""
    with _OPEN_LOCK:
        recorders = list(_OPEN.values())
    for rec in recorders:
        rec.close()


class ReplayMiss(BaseException):
    """A request that the notebook's cassette does not hold (why it derives from BaseException: docs/package.md)."""


def _body_json(body: bytes | str | None):
    """The JSON body of a request, or None if it is not JSON."""
    if body is None:
        return None
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    try:
        return json.loads(body)
    except ValueError:
        return body


def _cassette_key(method: str, uri: str, body: bytes | str | None) -> str:
    """Method, path, query and the JSON body in canonical form (key order and spacing ignored)."""
    parts = urlsplit(uri)
    return f"{method} {parts.path}?{parts.query} {json.dumps(_body_json(body), sort_keys=True)}"


def _yaml():
    import yaml

    return (
        yaml,
        getattr(yaml, "CSafeLoader", yaml.SafeLoader),
        getattr(yaml, "CSafeDumper", yaml.SafeDumper),
    )


def _one(value) -> str:
    return value[0] if isinstance(value, list) else value


@dataclass
class Recorder:
    """One notebook's cassette: an index of recorded interactions, and the recording of new ones."""

    notebook: str
    path: Path
    mode: str  # "replay" or "record"
    # record: replay what is recorded, record only new calls (Settings.record_keep)
    keep: bool = False
    prune: bool = False  # replay: drop recorded calls nobody asked for (Settings.replay_prune)
    interactions: list[dict] = field(default_factory=list)
    played: set[int] = field(default_factory=set)
    _index: dict[str, deque[int]] = field(default_factory=lambda: defaultdict(deque))
    _last: dict[str, int] = field(
        default_factory=dict
    )  # replay: the last interaction played per key
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    closed: bool = False

    def open(self) -> Recorder:
        """Load the cassette (replay, or record with keep) and register it as this notebook's."""
        if self.mode == "replay" and not self.path.exists():
            raise FileNotFoundError(
                f"No cassette for notebook {self.notebook!r} at {self.path}. "
                f"Record it with a live model: make record NB={self.notebook.split('_')[0]}"
            )
        if self.mode == "record" and not self.keep:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.unlink(missing_ok=True)  # recording rewrites the whole cassette
        elif self.path.exists():
            yaml, loader, _ = _yaml()
            data = yaml.load(self.path.read_text(), Loader=loader) or {}
            for item in data.get("interactions", []):
                self._add(item)
        with _OPEN_LOCK:
            old = _OPEN.get(self.path)
            _OPEN[self.path] = self
        if old is not None and old is not self:
            old.close()  # connect() ran again for this notebook (a re-run cell)
        return self

    def _add(self, item: dict) -> None:
        req = item["request"]
        self._index[_cassette_key(req["method"], req["uri"], req.get("body"))].append(
            len(self.interactions)
        )
        self.interactions.append(item)

    def lookup(self, request: httpx.Request) -> httpx.Response | None:
        """The next unplayed recorded response to this request; in replay, once every recording of it
        was played, the last one again (a cell run twice); else None."""
        key = _cassette_key(request.method, str(request.url), request.content)
        with self._lock:
            queue = self._index.get(key)
            if queue:
                i = queue.popleft()
            elif self.mode == "replay" and key in self._last:
                i = self._last[key]
            else:
                return None
            self._last[key] = i
            self.played.add(i)
            if self.prune:
                self._save()
        resp = self.interactions[i]["response"]
        headers = [(k, _one(v)) for k, v in resp["headers"].items()] + [(REPLAYED_HEADER, "1")]
        body = resp["body"]["string"]
        return httpx.Response(
            resp["status"]["code"],
            headers=headers,
            content=body.encode() if isinstance(body, str) else body,
        )

    def add(self, request: httpx.Request, response: httpx.Response, latency_ms: int) -> None:
        """Record one live interaction (whitelisted headers only) and write the cassette."""
        req_headers = {
            k.lower(): [v] for k, v in request.headers.items() if k.lower() in _KEEP_REQUEST_HEADERS
        }
        resp_headers = {
            k.lower(): [v]
            for k, v in response.headers.items()
            if k.lower() in _KEEP_RESPONSE_HEADERS
        }
        resp_headers[LATENCY_HEADER] = [str(latency_ms)]
        item = {
            "request": {
                "body": request.content.decode("utf-8", errors="replace"),
                "headers": req_headers,
                "method": request.method,
                "uri": str(request.url),
            },
            "response": {
                "body": {"string": response.content.decode("utf-8", errors="replace")},
                "headers": resp_headers,
                "status": {"code": response.status_code, "message": response.reason_phrase},
            },
        }
        with self._lock:
            self._add(item)
            self._index[
                _cassette_key(request.method, str(request.url), request.content)
            ].pop()  # played now
            self.played.add(len(self.interactions) - 1)
            self._save()

    def _save(self) -> None:
        if self.closed:
            return  # a newer recorder owns the file now
        keep = range(len(self.interactions))
        if self.mode == "replay":  # pruning: only what was asked for so far, in cassette order
            keep = sorted(self.played)
        yaml, _, dumper = _yaml()
        text = yaml.dump(
            {"interactions": [self.interactions[i] for i in keep], "version": 1},
            Dumper=dumper,
            allow_unicode=True,
            sort_keys=True,
            width=100,
        )
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(text)
        tmp.replace(self.path)

    def close(self) -> None:
        """Stop writing this cassette (each call was already saved)."""
        self.closed = True
        with _OPEN_LOCK:
            if _OPEN.get(self.path) is self:
                del _OPEN[self.path]

    def miss_message(self, request: httpx.Request) -> str:
        """What a replay miss says: the notebook, the closest recorded request's diff, the fix."""
        nb = self.notebook.split("_")[0]
        asked = json.dumps(_body_json(request.content), indent=1, sort_keys=True).splitlines()
        best, best_ratio = None, -1.0
        for item in self.interactions:
            old_lines = json.dumps(
                _body_json(item["request"].get("body")), indent=1, sort_keys=True
            ).splitlines()
            ratio = difflib.SequenceMatcher(None, old_lines, asked).ratio()
            if ratio > best_ratio:
                best, best_ratio = old_lines, ratio
        diff = ""
        if best is not None:
            lines = list(
                difflib.unified_diff(best, asked, "recorded", "asked now", n=0, lineterm="")
            )[2:14]
            # a long line (a whole prompt in one JSON string) shown from a little before where the first changed
            # pair of lines differs, not from its opening words
            was = next((x[1:] for x in lines if x.startswith("-")), "")
            now = next((x[1:] for x in lines if x.startswith("+")), "")
            at = next((k for k, (a, b) in enumerate(zip(was, now, strict=False)) if a != b), 0)
            start = max(0, at - 60)
            diff = "\nClosest recorded request, differences:\n" + "\n".join(
                x[:160]
                if len(x) <= 160 or x[0] not in "-+"
                else x[0] + "..." * bool(start) + x[1 + start :][:160]
                for x in lines
            )
        return (
            f"Replay miss in notebook {self.notebook!r}: this request is not in {self.path.name}. "
            f"A prompt or a parameter changed since the recording. Replay never calls a live model. "
            f"Re-record with: make record NB={nb}{diff}"
        )


def empty_reply(request: httpx.Request) -> httpx.Response:
    """A chat completion with no text and no tokens: what grading answers a request the recording lacks, so that a
    learner's own prompt leaves the lesson running (the graded exercises are checked on scripted models)."""
    body = _body_json(request.content)
    content = json.dumps(
        {
            "id": "replay-empty",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "replay") if isinstance(body, dict) else "replay",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": ""},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
    ).encode()
    return httpx.Response(
        200,
        headers=[("content-type", "application/json"), (LATENCY_HEADER, "0")],
        content=content,
        request=request,
    )


class CourseTransport(httpx.BaseTransport):
    """Wraps the real transport: answers from the cassette, or from the live request cache
    (course_runtime.response_cache), records, and stamps each response with its latency
    (`x-course-latency-ms`), measured here for live calls; a cached reply carries its original
    latency and `x-course-cached: 1`."""

    def __init__(
        self,
        inner: httpx.BaseTransport | None = None,
        recorder: Recorder | None = None,
        cache: Any = None,  # the local model's disk cache (course_runtime.response_cache), if any
        # replay: what answers a request the cassette lacks (the request rewritten for a live server), if any
        fallback: Callable[[httpx.Request], httpx.Request] | None = None,
        empty_miss: bool = False,  # replay: answer such a request with an empty reply (grading) instead
    ):
        self.inner = inner or httpx.HTTPTransport()
        self.recorder = recorder
        self.cache = cache
        self.fallback = fallback
        self.empty_miss = empty_miss

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Answer from the cassette or the cache, or send the request live (recording it in record mode)."""
        rec = self.recorder
        request.read()
        if rec is not None:
            hit = rec.lookup(request)
            if hit is not None:
                return hit
            if rec.mode == "replay":
                if self.empty_miss:
                    return empty_reply(request)
                if self.fallback is None:
                    raise ReplayMiss(rec.miss_message(request))
                request, rec = self.fallback(request), None  # answered live, recorded nowhere
        cache = (
            self.cache
            if self.cache is not None and deterministic(_body_json(request.content))
            else None
        )
        cached = cache.get(request.content) if cache is not None else None
        if cached is not None:
            content, latency_ms = cached
            response = httpx.Response(
                200, headers=[("content-type", "application/json")], content=content
            )
            if rec is not None:
                rec.add(
                    request, response, latency_ms
                )  # a real reply of this model file to this request
            return httpx.Response(
                200,
                headers=[
                    ("content-type", "application/json"),
                    (LATENCY_HEADER, str(latency_ms)),
                    (CACHED_HEADER, "1"),
                ],
                content=content,
                request=request,
            )
        if cache is not None:
            cache.begin()
        start = time.perf_counter()
        try:
            response = self.inner.handle_request(request)
            content = response.read()
        finally:
            alone = cache.end() if cache is not None else False
        latency_ms = round((time.perf_counter() - start) * 1000)
        if rec is not None and response.status_code == 200:
            rec.add(request, response, latency_ms)
        if cache is not None and alone and response.status_code == 200:
            cache.put(request.content, content, latency_ms)
        headers = [
            (k, v)
            for k, v in response.headers.items()
            if k.lower() not in ("content-encoding", "content-length")
        ]
        headers.append((LATENCY_HEADER, str(latency_ms)))
        return httpx.Response(
            response.status_code, headers=headers, content=content, request=request
        )

    def close(self) -> None:
        """Close the wrapped transport."""
        self.inner.close()


def recorded_requests(path: Path) -> list[dict]:
    """The requests of a cassette as dicts: {'body': parsed JSON, 'headers': {...}, 'uri': str}."""
    yaml, loader, _ = _yaml()
    data = yaml.load(path.read_text(), Loader=loader) or {}
    out = []
    for item in data.get("interactions", []):
        req = item["request"]
        out.append(
            {
                "uri": req["uri"],
                "body": _body_json(req.get("body")),
                "headers": {k.lower(): _one(v) for k, v in (req.get("headers") or {}).items()},
            }
        )
    return out
