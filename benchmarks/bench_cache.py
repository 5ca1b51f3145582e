"""The live request cache on the local model: one deterministic request sent twice.

    COURSE_BACKEND=local python benchmarks/bench_cache.py

Prints the wall time of the first call (the model answers, and the reply is stored) and of the
second (answered from the cache), and the ledger's line, which counts the cached call. The
request carries a nonce, so the first call is never a hit left by an earlier run. Rerunnable;
not a pass/fail test.
"""

from __future__ import annotations

import time
import uuid

from course_runtime import connect


def main() -> None:
    conn = connect("bench_cache")
    ask = [
        {
            "role": "user",
            "content": f"Write a Python function that returns the square of x. Only code. ({uuid.uuid4().hex[:8]})",
        }
    ]
    for label in ("first call (the model)", "second call (the cache)"):
        start = time.perf_counter()
        reply = conn.chat(ask, temperature=0, seed=42, max_tokens=80)
        print(f"{label}: {time.perf_counter() - start:.2f} s, {reply.completion_tokens} tokens")
    print(conn.ledger.model_time())


if __name__ == "__main__":
    main()
