"""Writers in their own processes, for tests/test_memory.py.

python -m tests.memory_process write DB NAME N     # add N episodes (attempts 0..N-1, session "shared"), one per transaction
python -m tests.memory_process hold DB             # open a transaction, insert 50 rows, print "ready", then wait to be killed
"""

from __future__ import annotations

import sys
import time

from reflect.memory.store import Episode, MemoryStore


def main() -> None:
    mode, db = sys.argv[1], sys.argv[2]
    store = MemoryStore(db)
    if mode == "write":
        name, n = sys.argv[3], int(sys.argv[4])
        added = sum(
            store.add(Episode("task", "shared", i, f"{name} reflection {i}", score=i / n))
            for i in range(n)
        )
        print(added, flush=True)
    else:
        store._db.execute("BEGIN IMMEDIATE")
        for i in range(50):
            store._db.execute(
                "INSERT INTO episodes (task_key, session, attempt, reflection, created_at) VALUES (?, ?, ?, ?, ?)",
                ("half", "killed", i, "never committed", time.time()),
            )
        print("ready", flush=True)
        time.sleep(600)


if __name__ == "__main__":
    main()
