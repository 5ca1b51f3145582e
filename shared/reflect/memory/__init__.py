"""The memory layer: episodic memory across attempts and sessions (lesson 05), in SQLite."""

from .store import Episode, MemoryFileError, MemoryStore, task_key

__all__ = ["Episode", "MemoryFileError", "MemoryStore", "task_key"]
