"""Run one function over many independent items on a few threads, results in input order (model calls spend
their time waiting; why COURSE_WORKERS defaults to 1 on the local model: `config.default_workers`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def parallel_map(
    fn: Callable[[T], R],
    items: Iterable[T],
    workers: int = 4,
    desc: str | None = None,
    progress: bool = True,
) -> list[R]:
    """[fn(item) for item in items] on `workers` threads, in input order, with a progress bar.

    The first exception raised by `fn` is raised here once the calls in flight have finished
    (calls not yet started are cancelled); a `ReplayMiss` or KeyboardInterrupt stops it too.
    """
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        return [fn(item) for item in _bar(items, desc, progress)]
    results: list = [None] * len(items)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="reflect") as pool:
        futures = {pool.submit(fn, item): i for i, item in enumerate(items)}
        try:
            for future in _bar(as_completed(futures), desc, progress, total=len(items)):
                results[futures[future]] = future.result()
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    return results


def _bar(iterable, desc: str | None, progress: bool, total: int | None = None):
    if not progress:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, total=total, leave=False)
