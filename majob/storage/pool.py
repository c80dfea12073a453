"""Run one function over many items on a thread pool, stopping at the first failure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def run_all(work: Callable[[T], R], items: Sequence[T], jobs: int, name: str) -> list[R]:
    """``[work(item) for item in items]`` with up to ``jobs`` threads, results in item order.

    On the first exception the items not yet started are cancelled, the running ones are waited
    for, and that exception is raised: nothing keeps running behind the caller's back.
    """
    if jobs <= 1 or len(items) <= 1:
        return [work(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(jobs, len(items)), thread_name_prefix=name) as pool:
        futures = [pool.submit(work, item) for item in items]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for future in done:
            error = future.exception()
            if error is not None:
                pool.shutdown(wait=True, cancel_futures=True)
                raise error
        return [future.result() for future in futures]
