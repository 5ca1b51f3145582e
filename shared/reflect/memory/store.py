"""Episodic memory that loses nothing: reflections per task, in SQLite, append-only.

Safe to share between processes; a file that is not this course's memory raises
`MemoryFileError` and is left as it was. Details: docs/package.md, "The modules in detail".
"""

from __future__ import annotations

import hashlib
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

SCHEMA_VERSION = 1
_APPLICATION_ID = 0x52464C58  # "RFLX": marks a SQLite file as this course's memory
_SQLITE_HEADER = b"SQLite format 3\x00"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS episodes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_key TEXT NOT NULL,
    session TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    reflection TEXT NOT NULL,
    score REAL,
    passed INTEGER,
    code TEXT NOT NULL DEFAULT '',
    model TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    UNIQUE (task_key, session, attempt)
);
CREATE INDEX IF NOT EXISTS episodes_by_task ON episodes (task_key, id);
"""


class MemoryFileError(RuntimeError):
    """The memory file cannot be used; the message names it and says what to do. The file is kept."""


@dataclass(frozen=True)
class Episode:
    """One remembered attempt and the reflection written after it."""

    task_key: str
    session: str
    attempt: int
    reflection: str
    score: float | None = None
    passed: bool | None = None
    code: str = ""
    model: str = ""
    created_at: float = 0.0


def task_key(task_text: str) -> str:
    """A stable key for a task: the first 16 hex digits of the SHA-256 of its text."""
    return hashlib.sha256(task_text.strip().encode()).hexdigest()[:16]


class MemoryStore:
    """Append-only episodic memory in one SQLite file (see the module docstring)."""

    def __init__(self, path: str | Path, busy_timeout_s: float = 10.0):
        self.path = Path(path)
        self._check_header()
        self._db: sqlite3.Connection | None = None
        try:
            self._db = sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            self._open_schema()  # before anything that writes: a file that is not ours stays byte for byte
            self._db.execute("PRAGMA journal_mode = WAL")
        except (sqlite3.DatabaseError, MemoryFileError) as err:
            if self._db is not None:
                self._db.close()
            if isinstance(err, MemoryFileError):
                raise
            raise self._error(f"SQLite cannot read it ({err})") from err

    def _error(self, why: str) -> MemoryFileError:
        return MemoryFileError(
            f"The memory file {self.path} cannot be used: {why}. It was left as it is; "
            "move it away or pass another path to start an empty memory."
        )

    def _check_header(self) -> None:
        if self.path.exists() and self.path.stat().st_size > 0:
            with self.path.open("rb") as f:
                if f.read(16) != _SQLITE_HEADER:
                    raise self._error("it is not a SQLite database")

    def _open_schema(self) -> None:
        db = self._db
        (app,) = db.execute("PRAGMA application_id").fetchone()
        (version,) = db.execute("PRAGMA user_version").fetchone()
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        if app == 0 and not tables:  # a new (or empty) file: make it ours
            db.execute("BEGIN IMMEDIATE")
            try:
                (app,) = db.execute("PRAGMA application_id").fetchone()
                if app == 0:  # another process may have initialised it while we waited
                    for statement in filter(str.strip, _SCHEMA.split(";")):
                        db.execute(statement)
                    db.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
                    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
            return
        if app != _APPLICATION_ID:
            raise self._error(
                f"it is another program's database (tables: {', '.join(sorted(tables)) or 'none'})"
            )
        if version > SCHEMA_VERSION:
            raise self._error(
                f"it was written by a newer version of the course (schema {version}, this one reads "
                f"{SCHEMA_VERSION})"
            )
        if version < 1:
            raise self._error(f"its schema version {version} is older than any this course wrote")
        (check,) = db.execute("PRAGMA quick_check").fetchone()
        if check != "ok":
            raise self._error(f"it is damaged ({check})")

    def add(self, episode: Episode) -> bool:
        """Append one episode in its own transaction; False if that (task, session, attempt) is already stored."""
        cur = self._db.execute(
            "INSERT INTO episodes (task_key, session, attempt, reflection, score, passed, code, model, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (task_key, session, attempt) DO NOTHING",
            (
                episode.task_key,
                episode.session,
                episode.attempt,
                episode.reflection,
                episode.score,
                None if episode.passed is None else int(episode.passed),
                episode.code,
                episode.model,
                episode.created_at or time.time(),
            ),
        )
        return cur.rowcount == 1

    def history(self, key: str) -> list[Episode]:
        """Every episode of a task, oldest first."""
        rows = self._db.execute(
            "SELECT task_key, session, attempt, reflection, score, passed, code, model, created_at FROM episodes "
            "WHERE task_key = ? ORDER BY id",
            (key,),
        ).fetchall()
        return [Episode(*r[:5], None if r[5] is None else bool(r[5]), *r[6:]) for r in rows]

    def recall(self, key: str, k: int = 3) -> list[Episode]:
        """The last `k` episodes of a task that hold a reflection (the bounded window a prompt
        carries), oldest first; an accepted attempt's episode has none and is not recalled."""
        if k <= 0:
            return []
        return [e for e in self.history(key) if e.reflection.strip()][-k:]

    def count(self) -> int:
        """How many episodes are stored, all tasks together."""
        return self._db.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
