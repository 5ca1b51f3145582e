"""Course settings, read from the environment or a `.env` file (the environment wins)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dotenv import dotenv_values, find_dotenv
from platformdirs import user_cache_path, user_state_path

_BACKENDS = ("local", "openai", "replay", "record")
ENGINES = ("auto", "xllamacpp", "llama-server")
_LIVE_BACKENDS = ("local", "openai")
_APP_NAME = "reflection-course"
# one chat call, retries included: a long local generation fits, a hang does not
DEFAULT_TIMEOUT_S = 300.0


WINDOWS_MESSAGE = (
    "This course runs on Linux or macOS. On Windows, run it inside WSL2 (Windows Subsystem for Linux): in "
    "PowerShell as administrator run `wsl --install`, restart, open Ubuntu from the Start menu, clone the "
    "course there and run `make lab`. The sandbox that runs model-written code needs POSIX process "
    "control (resource limits, process groups) that native Windows Python does not have, so the course "
    "stops here instead of failing later in a lesson."
)


class UnsupportedPlatform(RuntimeError):
    """The course cannot run here (native Windows): the message says what to do instead."""


def require_supported_platform(platform: str | None = None) -> None:
    """Raise `UnsupportedPlatform` with the WSL2 instructions on native Windows (`sys.platform` "win32")."""
    if (platform or sys.platform) == "win32":
        raise UnsupportedPlatform(WINDOWS_MESSAGE)


class ConfigError(ValueError):
    """A setting is missing or wrong; the message says which variable to change."""


def _read_env() -> dict[str, str]:
    """Merge `.env` (nearest one above the working folder) under the real environment."""
    values: dict[str, str] = {}
    path = find_dotenv(usecwd=True)
    if path:
        values.update({k: v for k, v in dotenv_values(path).items() if v is not None})
    values.update(os.environ)
    return values


def repo_root() -> Path:
    """The course checkout this package was installed from (editable install)."""
    return Path(__file__).resolve().parents[3]


def _path(env: dict[str, str], var: str, default: Callable[[], Path]) -> Path:
    """The folder `var` names, else `default()`."""
    return Path(env[var]) if env.get(var) else default()


def cache_dir() -> Path:
    """Where the assembled model file lives (override: COURSE_CACHE_DIR)."""
    return _path(_read_env(), "COURSE_CACHE_DIR", lambda: user_cache_path(_APP_NAME))


def state_dir() -> Path:
    """Where the shared server's state file and log live (override: COURSE_STATE_DIR)."""
    return _path(_read_env(), "COURSE_STATE_DIR", lambda: user_state_path(_APP_NAME))


_REPLAY_MISS = ("stop", "live", "empty")


def _choice(env: dict[str, str], var: str, default: str, allowed: tuple, hint: str = "") -> str:
    """`var`'s value (else `default`), lower-cased; ConfigError when it is not one of `allowed`."""
    value = (env.get(var) or default).strip().lower()
    if value not in allowed:
        raise ConfigError(f"Unknown {var}={value!r}. Use one of: {', '.join(allowed)}{hint}.")
    return value


def replay_miss_default(env: dict[str, str]) -> str:
    """ "live" in a notebook a person opened in Jupyter (its kernel has JPY_SESSION_NAME), outside CI; else
    "stop": nbval, nbclient and scripts run kernels without it, so a miss there still stops with its message."""
    in_ci = env.get("CI", "").strip().lower() in ("true", "1")
    return "live" if env.get("JPY_SESSION_NAME") and not in_ci else "stop"


def default_workers(backend: str, live: str) -> int:
    """Calls a lesson makes at once unless COURSE_WORKERS says otherwise: 1 on the live local model (llama.cpp
    batches concurrent requests, and a batched request can get another reply at temperature 0, so a live run would
    not reproduce the recorded outputs); 4 on a hosted API and in replay, which answers by content in any order."""
    return 1 if backend in ("local", "record") and live == "local" else 4


@dataclass(frozen=True)
class Settings:
    """Every course setting, read once from the environment and `.env`."""

    backend: str
    record_from: str
    model_path: str | None
    local_port: int
    idle_minutes: float
    openai_api_key: str | None
    openai_base_url: str | None
    model: str | None
    role_models: dict[str, str] = field(default_factory=dict)
    cassette_dir: Path = field(default_factory=lambda: repo_root() / "cassettes")
    timeout_s: float = DEFAULT_TIMEOUT_S  # COURSE_TIMEOUT_S: the budget of one chat call
    record_keep: bool = False  # COURSE_RECORD_KEEP=1: record only calls the cassette lacks
    replay_prune: bool = False  # COURSE_REPLAY_PRUNE=1: drop recorded calls no cell made
    # COURSE_REPLAY_MISS: what replay does with a request its cassette lacks, "stop" (ReplayMiss: nbval, CI,
    # scripts), "live" (the local model answers: a notebook opened in Jupyter; see replay_miss_default) or "empty"
    # (an empty reply: `course.py grade`, where a learner's own request must not stop the lesson)
    replay_miss: str = "stop"
    workers: int = 1  # COURSE_WORKERS: calls a lesson makes at once (see default_workers)
    engine: str = "auto"  # COURSE_ENGINE: auto | xllamacpp | llama-server (course_runtime.manager)
    cache: bool = True  # COURSE_CACHE=off: no live request cache (course_runtime.response_cache)
    local_model: str = (
        "qwen2.5-coder-1.5b"  # COURSE_LOCAL_MODEL: or qwen2.5-coder-0.5b (docs/models.md)
    )

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Settings:
        """Settings from `env` (default: the environment over `.env`); ConfigError names a bad variable."""
        env = _read_env() if env is None else env
        key = env.get("OPENAI_API_KEY") or None
        default_live = "openai" if key else "local"
        backend = _choice(
            env, "COURSE_BACKEND", default_live, _BACKENDS, " (unset it to use the local model)"
        )
        record_from = _choice(env, "COURSE_RECORD_FROM", default_live, _LIVE_BACKENDS)
        try:
            port = int(env.get("COURSE_LOCAL_PORT") or 0)
            idle = float(env.get("COURSE_LOCAL_IDLE_MINUTES") or 30)
            timeout = float(env.get("COURSE_TIMEOUT_S") or DEFAULT_TIMEOUT_S)
            workers = int(env.get("COURSE_WORKERS") or 0)
        except ValueError as err:
            raise ConfigError(
                "COURSE_LOCAL_PORT / COURSE_LOCAL_IDLE_MINUTES / COURSE_TIMEOUT_S / COURSE_WORKERS "
                f"must be numbers: {err}"
            ) from err
        live = record_from if backend in ("record", "replay") else backend
        workers = workers or default_workers(backend, live)
        if not 1 <= workers <= 16:
            raise ConfigError(f"COURSE_WORKERS must be between 1 and 16, got {workers}")
        engine = _choice(env, "COURSE_ENGINE", "auto", ENGINES)
        if timeout <= 0:
            raise ConfigError(
                f"COURSE_TIMEOUT_S must be a positive number of seconds, got {timeout:g}"
            )
        miss = _choice(env, "COURSE_REPLAY_MISS", replay_miss_default(env), _REPLAY_MISS)
        roles = {
            k.removeprefix("COURSE_MODEL_").lower(): v
            for k, v in env.items()
            if k.startswith("COURSE_MODEL_") and k != "COURSE_MODEL_PATH" and v
        }
        cassettes = _path(env, "COURSE_CASSETTE_DIR", lambda: repo_root() / "cassettes")
        return cls(
            backend=backend,
            record_from=record_from,
            model_path=env.get("COURSE_MODEL_PATH") or None,
            local_port=port,
            idle_minutes=idle,
            openai_api_key=key,
            openai_base_url=env.get("OPENAI_BASE_URL") or None,
            model=env.get("COURSE_MODEL") or None,
            role_models=roles,
            cassette_dir=cassettes,
            timeout_s=timeout,
            record_keep=env.get("COURSE_RECORD_KEEP", "") == "1",
            replay_prune=env.get("COURSE_REPLAY_PRUNE", "") == "1",
            replay_miss=miss,
            workers=workers,
            engine=engine,
            local_model=(env.get("COURSE_LOCAL_MODEL") or "qwen2.5-coder-1.5b").strip().lower(),
            cache=(env.get("COURSE_CACHE") or "on").strip().lower()
            not in ("off", "0", "false", "no"),
        )

    @property
    def live_backend(self) -> str:
        """The backend that actually answers when not replaying."""
        return self.record_from if self.backend in ("record", "replay") else self.backend
