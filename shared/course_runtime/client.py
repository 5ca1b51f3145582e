"""The one way into a model: `connect()` returns a ready `Connection` (an `openai.OpenAI` client, its
model name, `chat`, `map` and a ledger of every call), with the course's local server (`manager`) and its
disk cache of replies (`response_cache`).

    from course_runtime import connect
    conn = connect("01_one_shot")          # prints one banner line
    client, model = conn                   # a plain openai client, if you want it
    reply = conn.chat([{"role": "user", "content": "Hi"}], role="generator", temperature=0)

Backends (COURSE_BACKEND, from the environment or `.env`):
  local   llama.cpp's server on 127.0.0.1 with Qwen2.5-Coder-1.5B-Instruct (default without a key)
  openai  OPENAI_API_KEY, optional OPENAI_BASE_URL (Ollama, vLLM, LM Studio ...), COURSE_MODEL
  replay  answers from cassettes/<notebook>.yaml; never a live call (what CI and nbval use)
  record  live (COURSE_RECORD_FROM=local|openai) and rewrites cassettes/<notebook>.yaml

`conn.chat` may be called from several threads at once; `conn.map(fn, items)` runs `fn` over
many independent items with COURSE_WORKERS threads (the local server has as many slots).

With `COURSE_CELL_LOG=<file>` set (benchmarks/bench_course_run.py sets it), a connection made in a notebook
appends one JSON line per executed cell to that file: the lesson, the cell's first line, its wall seconds, and
the model calls it made (how many the cache answered), their tokens and their model seconds.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import tenacity

from reflect.model.accounting import CallRecord, Ledger
from reflect.model.cache import CACHED_HEADER
from reflect.model.config import (
    DEFAULT_TIMEOUT_S,
    ConfigError,
    Settings,
    require_supported_platform,
)
from reflect.model.llm import ModelError, Reply, response_format_for
from reflect.model.parallel import parallel_map

from . import response_cache
from .manager import ensure_server
from .replay import (
    BACKEND_HEADER,
    LATENCY_HEADER,
    REPLAYED_HEADER,
    ROLE_HEADER,
    CourseTransport,
    Recorder,
    ReplayMiss,
    recorded_requests,
)

_DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
MAX_RETRIES = (
    2  # retries of a refused connection, 408, 409 or a 5xx other than 503, within the budget
)
BACKOFF_S = (1.0, 2.0)  # wait before the first and second retry
_RETRY_STATUS = {408, 409}
# the server is full (503) or limits the rate (429): wait, as long as its Retry-After says where it
# says one (up to _BUSY_WAIT_MAX_S), and ask again for as long as the call's budget lasts
_BUSY_STATUS = {429, 503}
BUSY_WAIT_S = (1.0, 2.0, 4.0, 8.0, 15.0)  # the waits before the 1st, 2nd, ... retry; then the last
_BUSY_WAIT_MAX_S = 60.0


_SAMPLED = ("temperature", "seed", "max_tokens")  # the sampling a ledger record keeps


@dataclass
class Connection:
    """A ready client for the configured model, with a ledger of every call."""

    client: openai.OpenAI
    model: str
    backend: str  # local | openai | replay | record
    live_backend: str  # who produced the answers: local or openai
    base_url: str
    notebook: str | None = None
    role_models: dict[str, str] = field(default_factory=dict)
    ledger: Ledger = field(default_factory=Ledger)
    transport: CourseTransport | None = field(default=None, repr=False)
    recorder: Recorder | None = field(default=None, repr=False)
    settings: Settings | None = field(default=None, repr=False)
    local: Callable[[Settings], Any] | None = field(
        default=None, repr=False
    )  # starts the local server

    def __iter__(self):  # client, model = connect(...)
        yield self.client
        yield self.model

    @property
    def mode(self) -> str:
        """live, replay or record (live), as the banner says."""
        return {"replay": "replay", "record": "record (live)"}.get(self.backend, "live")

    def banner(self) -> str:
        """The one line printed at connect: backend, model, where the answers come from, mode.

        The address is shown only where it means something to the reader: an OpenAI-compatible
        server (hosted or a classroom's). The course's local server is on a port that changes
        from run to run, and a replay reads a cassette."""
        if self.backend == "replay":
            where = ""
        elif self.live_backend == "local":
            where = " · the course's local llama.cpp server"
        else:
            where = f" · base_url={self.base_url}"
        if self.recorder is not None:
            where += f" · cassette {self.recorder.path.parent.name}/{self.recorder.path.name}"
        src = f" (recorded from {self.live_backend})" if self.backend == "replay" else ""
        cache = (
            " · request cache on"
            if self.transport is not None and self.transport.cache is not None
            else ""
        )
        return f"[reflect] backend={self.backend}{src} · model={self.model}{where}{cache} · {self.mode}"

    def model_for(self, role: str) -> str:
        """Per-role model (COURSE_MODEL_<ROLE>, e.g. a cheaper critic); the default otherwise."""
        return self.role_models.get(role.lower(), self.model)

    def response_format(self, schema: dict, name: str = "reply") -> dict:
        """Schema-constrained JSON in the form this backend accepts."""
        return response_format_for(schema, name)

    @property
    def workers(self) -> int:
        """How many calls a lesson makes at once (COURSE_WORKERS)."""
        return self.settings.workers if self.settings else 1

    def map(self, fn, items, desc: str | None = None) -> list:
        """[fn(item) for item in items], run on `self.workers` threads, results in input order,
        with a progress bar on live runs (none in replay, where it would only flash)."""
        return parallel_map(
            fn, items, workers=self.workers, desc=desc, progress=self.backend != "replay"
        )

    @property
    def budget_s(self) -> float:
        """Seconds one chat call may take in all, retries included (COURSE_TIMEOUT_S)."""
        return self.settings.timeout_s if self.settings else DEFAULT_TIMEOUT_S

    def chat(self, messages: list[dict], role: str = "generator", **params: Any) -> Reply:
        """One chat completion, recorded in `self.ledger` under `role`.

        Returns or raises ModelError within `budget_s` seconds (plus, on the local backend, the
        time to restart a server that had died). A server that is down (connection refused or
        reset) is restarted once (local) or retried (others); a server that is slow is not
        retried and not restarted: the error says how long it waited and what to change.
        """
        model = params.pop("model", None) or self.model_for(role)
        start = time.monotonic()
        tries = _Tries(start, deadline=start + self.budget_s)
        retrying = tenacity.Retrying(  # when to ask again, and how long to wait first: self._again
            retry=tenacity.retry_if_exception(lambda err: self._again(err, tries)),
            wait=lambda _: tries.pause,
            sleep=time.sleep,
        )
        try:
            raw = retrying(lambda: self._create(model, messages, role, params, tries.left()))
        except openai.APIError as err:
            slow = isinstance(err, openai.APITimeoutError)
            raise ModelError(tries.why or self._explain(str(err))) from (None if slow else err)
        completion = raw.parse()
        header = raw.headers.get(LATENCY_HEADER)  # stamped by CourseTransport on every response
        latency = float(header) / 1000 if header is not None else time.monotonic() - start
        usage = completion.usage
        choice = completion.choices[0] if completion.choices else None
        reply = Reply(
            text=(choice.message.content or "") if choice else "",
            role=role,
            model=completion.model or model,
            prompt_tokens=usage.prompt_tokens if usage else 0,
            completion_tokens=usage.completion_tokens if usage else 0,
            latency_s=latency,
            finish_reason=choice.finish_reason if choice else None,
        )
        cached = raw.headers.get(CACHED_HEADER) == "1"
        self.ledger.add(
            CallRecord(
                role,
                reply.prompt_tokens,
                reply.completion_tokens,
                latency,
                self.live_backend,
                model,
                cached,
                tuple(sorted((k, v) for k, v in params.items() if k in _SAMPLED)),
                replayed=raw.headers.get(REPLAYED_HEADER) == "1",
            )
        )
        return reply

    def _create(self, model: str, messages: list[dict], role: str, params: dict, remaining: float):
        headers = {ROLE_HEADER: role, BACKEND_HEADER: self.live_backend}
        wait = max(remaining, 0.001)
        return self.client.chat.completions.with_raw_response.create(
            model=model,
            messages=messages,
            extra_headers=headers,
            timeout=httpx.Timeout(wait, connect=min(5.0, wait)),
            **params,
        )

    def _again(self, err: BaseException, tries: _Tries) -> bool:
        """Whether to send the call again after `err`, with `tries.pause` to wait first; if not, `tries.why` says
        why (for any error of the API). A slow server is not asked again; a local server that is down is restarted
        once, with a fresh budget; a busy one (503, 429) is asked again, after its Retry-After if it says one,
        while the budget lasts; a refused connection, 408, 409 and other 5xx up to MAX_RETRIES times."""
        now, tries.pause = time.monotonic(), 0.0
        if isinstance(err, openai.APITimeoutError):  # before APIConnectionError: it is a subclass
            tries.why = self._slow(now - tries.start)
            return False
        if (
            isinstance(err, openai.APIConnectionError)
            and self.backend == "local"
            and not tries.restarted
        ):
            self._reconnect_local()  # the shared server stopped (idle) or died: start it again
            tries.restarted, tries.deadline = True, time.monotonic() + self.budget_s
            return True
        status = err.status_code if isinstance(err, openai.APIStatusError) else None
        if status in _BUSY_STATUS:
            said = _retry_after(err.response)
            tries.pause = (
                said if said is not None else BUSY_WAIT_S[min(tries.busy, len(BUSY_WAIT_S) - 1)]
            )
            if now + tries.pause >= tries.deadline:
                tries.why = self._busy(status, tries.busy + 1, now - tries.start)
                return False
            tries.busy += 1
            return True
        if isinstance(err, openai.APIConnectionError):
            what = "could not connect"
        elif status is not None and (status in _RETRY_STATUS or status >= 500):
            what = str(err)
        else:  # another status, another error of the API, or not the API's (raised as it is)
            tries.why = self._explain(str(err)) if isinstance(err, openai.APIError) else ""
            return False
        if tries.retries >= MAX_RETRIES:
            tries.why = self._explain(what)
            return False
        tries.pause = BACKOFF_S[min(tries.retries, len(BACKOFF_S) - 1)]
        if now + tries.pause >= tries.deadline:
            tries.why = self._explain(
                f"{what} (no time left in the {self.budget_s:g} s budget for a retry)"
            )
            return False
        tries.retries += 1
        return True

    def _busy(self, status: int, tries: int, waited: float) -> str:
        return (
            f"The model server at {self.base_url} is busy: it answered HTTP {status} to {tries} "
            f"{'try' if tries == 1 else 'tries'} over {waited:.0f} s, and the call's budget "
            f"(COURSE_TIMEOUT_S={self.budget_s:g}) ends before another would be worth making. "
            f"{_CLASS_ADVICE} On a hosted API, 429 is its rate limit: wait a minute or lower the request rate."
        )

    def _slow(self, waited: float) -> str:
        shared = "" if self.live_backend == "local" else f" {_CLASS_ADVICE}"
        return (
            f"The {self.live_backend} model at {self.base_url} did not answer within {waited:.0f} s "
            f"(the per-call budget, COURSE_TIMEOUT_S={self.budget_s:g}). The server is slow, not down, so it "
            "was neither retried nor restarted. Ask for less (a shorter prompt, a smaller max_tokens), "
            f"raise COURSE_TIMEOUT_S, or check what else is using the CPU.{shared}"
        )

    def _reconnect_local(self) -> None:
        if self.local is None:
            raise ModelError(
                self._explain("the server is unreachable and this connection cannot start one")
            )
        state = self.local(self.settings)
        self.base_url = state.base_url
        self.client.base_url = state.base_url
        self.client.api_key = state.key

    def _explain(self, what: str) -> str:
        if self.live_backend == "local":
            hint = (
                "Check the local server: `python -m course_runtime.manager status`; restart it with "
                "`make stop-model` and run the cell again. Its log: the `server.log` in the course state folder."
            )
        else:
            hint = (
                f"Check OPENAI_API_KEY, OPENAI_BASE_URL (now {self.base_url}) and that model "
                f"{self.model!r} exists there."
            )
        return f"The {self.live_backend} model at {self.base_url} failed: {what}. {hint}"


_CLASS_ADVICE = (
    "A server shared by a class answers late or refuses while other learners' calls fill its slots: "
    "nothing is wrong on your side. Run the cell again in a minute; in class keep COURSE_WORKERS=1 and "
    "COURSE_FULL unset (each extra worker holds a slot another learner waits for); if it keeps "
    "happening, tell your instructor (the server needs more slots or a second machine: docs/instructor.md)."
)


@dataclass
class _Tries:
    """One chat call's tries so far: when it started, when its budget ends, and what the last error decided."""

    start: float
    deadline: float
    retries: int = 0  # after a refused connection, 408, 409 or a 5xx other than 503
    busy: int = 0  # after a 503 or a 429
    restarted: bool = False
    pause: float = 0.0  # before the next try
    why: str = ""  # why there is no next try

    def left(self) -> float:
        return self.deadline - time.monotonic()


def _retry_after(response: httpx.Response | None) -> float | None:
    """The seconds a Retry-After header asks for (its number form), at most _BUSY_WAIT_MAX_S."""
    value = response.headers.get("retry-after", "") if response is not None else ""
    try:
        return min(max(float(value), 0.0), _BUSY_WAIT_MAX_S)
    except ValueError:
        return None


NO_LIVE_MODEL = (
    "This request is not in the lesson's recording: your code asks the model something the recorded solution "
    "did not, which is allowed, but replay cannot answer it. Run the lesson on a model: unset COURSE_BACKEND "
    "for the local one (`python3 course.py setup` fetches it), or set COURSE_BACKEND=openai with your server."
)


class LiveFallback:
    """In a notebook a person opened in replay, a request the recording lacks goes to the local model: the
    server starts on the first such request, which prints one line; with no local model it is a short
    `ReplayMiss` saying what to do. Returns the request rewritten for the live server."""

    def __init__(self, settings: Settings, local: Callable[[Settings], Any], recorded_base: str):
        self.settings, self.local, self.recorded_base = settings, local, recorded_base.rstrip("/")
        self.state: Any = None
        self._lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Request:
        """The request, sent to the local server instead of the recording's address."""
        with self._lock:
            if self.state is None:
                try:
                    self.state = self.local(self.settings)
                except Exception as err:  # noqa: BLE001 - no model file, no engine, a port: all mean "not here"
                    raise ReplayMiss(f"{NO_LIVE_MODEL} ({type(err).__name__}: {err})") from err
                print(
                    "[reflect] a request not in the recording (your own): answered by the local model, live, "
                    "as is every other the recording lacks"
                )
        url = str(request.url)
        tail = (
            url[len(self.recorded_base) :]
            if url.startswith(self.recorded_base)
            else request.url.path
        )
        headers = {
            k: v
            for k, v in request.headers.items()
            if k.lower() not in ("host", "content-length", "authorization")
        }
        headers["authorization"] = f"Bearer {self.state.key}"
        return httpx.Request(
            request.method,
            self.state.base_url.rstrip("/") + tail,
            headers=headers,
            content=request.content,
        )


def _cassette_facts(path) -> tuple[str, str, str, dict[str, str]]:
    """Base URL, default model, live backend and per-role models of a recording."""
    reqs = [r for r in recorded_requests(path) if isinstance(r["body"], dict)]
    if not reqs:
        return "http://replay.invalid/v1", "unknown", "local", {}
    uri = reqs[0]["uri"]
    base = uri[: uri.index("/chat/completions")] if "/chat/completions" in uri else uri
    backend = reqs[0]["headers"].get(BACKEND_HEADER, "local")
    roles: dict[str, str] = {}
    for r in reqs:
        roles.setdefault(
            r["headers"].get(ROLE_HEADER, "generator"), r["body"].get("model", "unknown")
        )
    default = roles.get("generator", reqs[0]["body"].get("model", "unknown"))
    return base, default, backend, roles


def connect(
    notebook: str | None = None,
    *,
    settings: Settings | None = None,
    transport: httpx.BaseTransport | None = None,
    quiet: bool = False,
    local: Callable[[Settings], Any] | None = None,
    cache_for: Callable[[Any], Any] | None = None,
) -> Connection:
    """Return a ready connection to the configured model and print one banner line.

    `notebook` names the cassette (cassettes/<notebook>.yaml) used by replay and record.
    `transport` replaces the HTTP transport (tests use httpx.MockTransport). `local` starts the
    local server and returns its state (base_url, alias, key, model_path), the course's by default
    (`manager.ensure_server`); `cache_for` is the disk cache of the started server's model file, by default
    `response_cache.for_server`. With COURSE_CELL_LOG set, `log_cells` (below).
    """
    local, cache_for = local or ensure_server, cache_for or response_cache.for_server
    require_supported_platform()  # every lesson's first model cell: the WSL2 message, not a later failure
    settings = settings or Settings.from_env()
    recorder = None
    if settings.backend in ("replay", "record"):
        if not notebook:
            raise ConfigError(
                f"COURSE_BACKEND={settings.backend} needs a notebook name: connect('01_one_shot')."
            )
        recorder = Recorder(
            notebook,
            settings.cassette_dir / f"{notebook}.yaml",
            settings.backend,
            keep=settings.record_keep,
            prune=settings.replay_prune,
        )

    role_models = dict(settings.role_models)
    live = settings.live_backend
    cache = None  # the live request cache: the local model only
    if settings.backend == "replay":
        base_url, model, live, role_models = (
            _cassette_facts(recorder.path)
            if recorder.path.exists()
            else ("http://replay.invalid/v1", "unknown", live, {})
        )
        api_key = "replay-needs-no-key"
    elif live == "local":
        state = local(settings)
        base_url, model, api_key = state.base_url, state.alias, state.key
        if settings.cache and transport is None:
            cache = cache_for(state)
    else:
        if not settings.openai_api_key:
            raise ConfigError(
                "The openai backend needs OPENAI_API_KEY (in the environment or .env)."
            )
        base_url = settings.openai_base_url or "https://api.openai.com/v1"
        model, api_key = settings.model or _DEFAULT_OPENAI_MODEL, settings.openai_api_key

    fallback = (
        LiveFallback(settings, local, base_url)
        if settings.backend == "replay" and settings.replay_miss == "live"
        else None
    )
    course_transport = CourseTransport(
        transport,
        recorder.open() if recorder else None,
        cache,
        fallback,
        empty_miss=settings.backend == "replay" and settings.replay_miss == "empty",
    )
    timeout = httpx.Timeout(settings.timeout_s, connect=5.0)
    client = openai.OpenAI(  # no retries of its own: Connection.chat retries within one budget
        api_key=api_key,
        base_url=base_url,
        timeout=timeout,
        max_retries=0,
        http_client=httpx.Client(transport=course_transport, timeout=timeout),
    )
    conn = Connection(
        client=client,
        model=model,
        backend=settings.backend,
        live_backend=live,
        base_url=base_url,
        notebook=notebook,
        role_models=role_models,
        transport=course_transport,
        recorder=recorder,
        settings=settings,
        local=local,
    )
    if not quiet:
        print(conn.banner())
    if os.environ.get("COURSE_CELL_LOG"):
        log_cells(conn, Path(os.environ["COURSE_CELL_LOG"]), notebook or "")
    return conn


def log_cells(conn: Connection, path: Path, lesson: str) -> bool:
    """In IPython, append a line per executed cell to `path` (the module docstring); False outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False
    mark = {"t": time.perf_counter(), "n": len(conn.ledger.records)}

    def before(info) -> None:  # noqa: ANN001 - IPython's ExecutionInfo
        mark.update(t=time.perf_counter(), n=len(conn.ledger.records))

    def after(result) -> None:  # noqa: ANN001 - IPython's ExecutionResult
        calls = conn.ledger.records[mark["n"] :]
        source = (result.info.raw_cell or "").strip().splitlines()
        line = {
            "lesson": lesson,
            "cell": source[0][:80] if source else "",
            "wall_s": round(time.perf_counter() - mark["t"], 2),
            "calls": len(calls),
            "cached": sum(c.cached for c in calls),
            "tokens": sum(c.prompt_tokens + c.completion_tokens for c in calls),
            "model_s": round(sum(c.latency_s for c in calls if not c.cached), 2),
        }
        with path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")

    shell.events.register("pre_run_cell", before)
    shell.events.register("post_run_cell", after)
    return True
