"""run_all keeps order, and stops at the first failure without leaving work running."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from majob.storage import pool
from majob.storage.pool import run_all


def test_results_in_item_order() -> None:
    assert run_all(lambda x: x * 2, list(range(50)), 4, "t") == [x * 2 for x in range(50)]
    assert run_all(lambda x: x + 1, [1, 2], 1, "t") == [2, 3]


class _ReleasingPool(ThreadPoolExecutor):
    """A pool that lets the blocked work go on only once its pending items are cancelled."""

    gate = threading.Event()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait=False, cancel_futures=cancel_futures)
        self.gate.set()
        super().shutdown(wait=wait)


def test_first_failure_cancels_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[int] = []
    lock = threading.Lock()
    _ReleasingPool.gate = threading.Event()
    monkeypatch.setattr(pool, "ThreadPoolExecutor", _ReleasingPool)

    def work(x: int) -> int:
        with lock:
            started.append(x)
        if x == 0:
            raise RuntimeError("boom")
        # Every other item waits until the failure is seen and the pending items are cancelled
        # (a generous deadline only guards against a hang if run_all never cancels).
        assert _ReleasingPool.gate.wait(timeout=60), "run_all did not shut its pool down"
        return x

    with pytest.raises(RuntimeError, match="boom"):
        run_all(work, list(range(200)), 2, "t")
    # Item 0, and at most one more per thread (each blocks until the cancel): of 200 items,
    # the rest never started.
    assert 0 in started and len(started) <= 3
    assert not [t for t in threading.enumerate() if t.name.startswith("t_")]
