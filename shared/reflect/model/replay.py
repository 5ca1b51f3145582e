"""Record and replay model calls with vcrpy, one readable YAML cassette per notebook.

- Requests are matched on method, path and the whole JSON body (model, messages, every
  parameter), so a changed prompt is a miss. Each recorded interaction plays once, in order.
- Replay never falls back to a live call: vcrpy runs with record_mode "none", and a miss is
  raised as `ReplayMiss`, naming the notebook and the command that re-records it.
- `ReplayMiss` derives from BaseException on purpose: the openai client turns any Exception
  raised by the transport into a retried, generic "Connection error", and a reflection loop
  that tolerates provider errors would swallow it. A miss must stop the notebook.
- Cassettes hold no secrets: only whitelisted headers are kept (see `KEEP_*_HEADERS`), so
  Authorization, API keys, cookies and organisation ids never reach the file.
- Each recorded response carries `x-course-latency-ms`, the measured wall-clock latency, so
  replayed runs report the same latency (and tables and plots) as the recording.
- `make record NB=NN KEEP=1` (COURSE_RECORD_KEEP=1) re-records only what changed: recorded
  requests that still match are played back, new ones go to the live model; a replay pass
  with COURSE_REPLAY_PRUNE=1 then drops the interactions the notebook no longer asks for.
"""

from __future__ import annotations

import difflib
import json
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import vcr
from vcr.errors import CannotOverwriteExistingCassetteException, UnhandledHTTPRequestError
from vcr.record_mode import RecordMode
from vcr.serializers.compat import convert_to_bytes

LATENCY_HEADER = "x-course-latency-ms"
ROLE_HEADER = "x-course-role"
BACKEND_HEADER = "x-course-backend"
KEEP_REQUEST_HEADERS = {"content-type", ROLE_HEADER, BACKEND_HEADER}
KEEP_RESPONSE_HEADERS = {"content-type", LATENCY_HEADER}


_OPEN: dict[Path, Recorder] = {}  # cassettes active in this process, by path


def close_all() -> None:
    """Close every open cassette (vcrpy patches are process-wide while one is open)."""
    for rec in list(_OPEN.values()):
        rec.close()


class ReplayMiss(BaseException):
    """A request that the notebook's cassette does not hold (see module docstring)."""


def _lower_keys(headers: dict) -> dict:
    return {k.lower(): v for k, v in headers.items()}


def body_json(body: bytes | str | None):
    """The JSON body of a request, or None if it is not JSON."""
    if body is None:
        return None
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    try:
        return json.loads(body)
    except ValueError:
        return body


@lru_cache(maxsize=8192)
def _request_key(method: str, uri: str, body: bytes | str | None) -> str:
    """Method, path, query and the JSON body in canonical form (key order and spacing ignored)."""
    parts = urlsplit(uri)
    return f"{method} {parts.path}?{parts.query} {json.dumps(body_json(body), sort_keys=True)}"


def request_matcher(r1, r2) -> None:
    """vcrpy matcher on the whole request. The key is memoised: replay compares each request
    with every recorded one, and re-parsing JSON for each pair made replay O(n^2) in parsing."""
    assert _request_key(r1.method, r1.uri, r1.body) == _request_key(r2.method, r2.uri, r2.body), "requests differ"


@dataclass
class Recorder:
    """State shared by the transport and vcrpy's hooks for one cassette."""

    notebook: str
    path: Path
    mode: str  # "replay" or "record"
    started: float = 0.0
    last_ms: int | None = None
    cassette: object = None
    keep: bool = False  # record: replay what is recorded, record only new calls (Settings.record_keep)
    prune: bool = False  # replay: drop recorded calls nobody asked for (Settings.replay_prune)
    _context: object = field(default=None, repr=False)

    def scrub_request(self, request):
        """Keep only the whitelisted request headers (no keys, no cookies)."""
        request.headers = {k: v for k, v in request.headers.items() if k.lower() in KEEP_REQUEST_HEADERS}
        return request

    def scrub_response(self, response: dict) -> dict:
        """Keep only the whitelisted response headers and stamp the call's latency."""
        headers = {k: v for k, v in response["headers"].items() if k.lower() in KEEP_RESPONSE_HEADERS}
        if LATENCY_HEADER not in headers:  # vcrpy runs this hook on loaded responses too
            self.last_ms = round((time.perf_counter() - self.started) * 1000)
            headers[LATENCY_HEADER] = [str(self.last_ms)]
        response["headers"] = headers
        return response

    def open(self) -> Recorder:
        """Open the notebook's cassette for replay or recording."""
        if self.path in _OPEN and _OPEN[self.path].mode == self.mode:
            _OPEN[self.path].close()  # connect() ran again for this notebook (a re-run cell)
        if self.mode == "replay" and not self.path.exists():
            raise FileNotFoundError(
                f"No cassette for notebook {self.notebook!r} at {self.path}. "
                f"Record it with a live model: make record NB={self.notebook.split('_')[0]}"
            )
        if self.mode == "record":
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if not self.keep:
                self.path.unlink(missing_ok=True)  # recording rewrites the whole cassette
        if self.mode == "replay":
            record_mode = RecordMode.NONE
        else:
            record_mode = RecordMode.NEW_EPISODES if self.keep else RecordMode.ALL
        v = vcr.VCR(
            serializer="yaml",
            record_mode=record_mode,
            drop_unused_requests=self.mode == "replay" and self.prune,
            match_on=["course_request"],
            before_record_request=self.scrub_request,
            before_record_response=self.scrub_response,
            decode_compressed_response=True,
        )
        v.register_matcher("course_request", request_matcher)
        self._context = v.use_cassette(str(self.path))
        self.cassette = self._context.__enter__()
        _OPEN[self.path] = self
        return self

    def close(self) -> None:
        """Save (when recording) and close the cassette."""
        if self._context is not None:
            self._context.__exit__(None, None, None)
            self._context = None
        if _OPEN.get(self.path) is self:
            del _OPEN[self.path]

    def save(self) -> None:
        """Write the cassette now (record mode), so an interrupted recording keeps what it got."""
        if self.cassette is not None and (self.mode == "record" or self.prune):
            # vcrpy saves on exit; a kernel may never exit cleanly. When pruning, each save
            # writes the interactions played so far, so the end of the run leaves only those.
            self.cassette._save(force=True)
            for _, response in self.cassette.data:  # vcrpy's serializer turns bodies into str in place;
                convert_to_bytes(response)  # a later playback of them needs bytes again

    def miss_message(self, request: httpx.Request) -> str:
        """What a replay miss says: the notebook, the closest recorded request's diff, the fix."""
        nb = self.notebook.split("_")[0]
        asked = json.dumps(body_json(request.content), indent=1, sort_keys=True).splitlines()
        best, best_ratio = None, -1.0
        for old, _ in getattr(self.cassette, "data", []):
            old_lines = json.dumps(body_json(old.body), indent=1, sort_keys=True).splitlines()
            ratio = difflib.SequenceMatcher(None, old_lines, asked).ratio()
            if ratio > best_ratio:
                best, best_ratio = old_lines, ratio
        diff = ""
        if best is not None:
            lines = list(difflib.unified_diff(best, asked, "recorded", "asked now", n=0, lineterm=""))[2:14]
            diff = "\nClosest recorded request, differences:\n" + "\n".join(x[:160] for x in lines)
        return (
            f"Replay miss in notebook {self.notebook!r}: this request is not in {self.path.name} "
            f"(or was already played). A prompt, a parameter or the order of calls changed since "
            f"the recording. Replay never calls a live model. Re-record with: make record NB={nb}"
            f"{diff}"
        )


class CourseTransport(httpx.BaseTransport):
    """Wraps the real transport: times each call, turns cassette misses into ReplayMiss."""

    def __init__(self, inner: httpx.BaseTransport | None = None, recorder: Recorder | None = None):
        self.inner = inner or httpx.HTTPTransport()
        self.recorder = recorder
        self.last_latency_ms: float | None = None

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Send a request (or answer it from the cassette), timing it."""
        start = time.perf_counter()
        if self.recorder is not None:
            self.recorder.started = start
        try:
            response = self.inner.handle_request(request)
        except (CannotOverwriteExistingCassetteException, UnhandledHTTPRequestError):
            raise ReplayMiss(self.recorder.miss_message(request) if self.recorder else "replay miss") from None
        self.last_latency_ms = round((time.perf_counter() - start) * 1000)
        if self.recorder is not None and self.recorder.mode == "record":
            # report exactly what the cassette holds, so a replay prints the same numbers
            self.last_latency_ms = self.recorder.last_ms if self.recorder.last_ms is not None else self.last_latency_ms
        if self.recorder is not None and (self.recorder.mode == "record" or self.recorder.prune):
            self.recorder.save()
        return response

    def close(self) -> None:
        """Close the wrapped transport."""
        self.inner.close()


def recorded_requests(path: Path) -> list[dict]:
    """The requests of a cassette as dicts: {'body': parsed JSON, 'headers': {...}, 'uri': str}."""
    import yaml

    data = yaml.safe_load(path.read_text()) or {}
    out = []
    for item in data.get("interactions", []):
        req = item["request"]
        out.append({
            "uri": req["uri"],
            "body": body_json(req.get("body")),
            "headers": {k.lower(): (v[0] if isinstance(v, list) else v) for k, v in (req.get("headers") or {}).items()},
        })
    return out
