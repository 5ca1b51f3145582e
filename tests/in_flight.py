"""A counter of how many calls are inside a block at once, for tests of concurrency limits."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager


class InFlight:
    """`with counter.inside(): ...` from several threads; `peak` is the most inside at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.now = 0
        self.peak = 0

    @contextmanager
    def inside(self, hold_s: float = 0.05):
        """Count this thread in for the block, staying at least `hold_s` so calls can overlap."""
        with self._lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            time.sleep(hold_s)
            yield
        finally:
            with self._lock:
                self.now -= 1
