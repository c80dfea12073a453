"""run_all keeps order, and stops at the first failure without leaving work running."""

from __future__ import annotations

import threading
import time

import pytest

from majob.storage.pool import run_all


def test_results_in_item_order() -> None:
    assert run_all(lambda x: x * 2, list(range(50)), 4, "t") == [x * 2 for x in range(50)]
    assert run_all(lambda x: x + 1, [1, 2], 1, "t") == [2, 3]


def test_first_failure_cancels_the_rest() -> None:
    started: list[int] = []
    lock = threading.Lock()

    def work(x: int) -> int:
        with lock:
            started.append(x)
        if x == 0:
            raise RuntimeError("boom")
        time.sleep(0.01)
        return x

    with pytest.raises(RuntimeError, match="boom"):
        run_all(work, list(range(200)), 2, "t")
    assert len(started) < 200
    assert not [t for t in threading.enumerate() if t.name.startswith("t_")]
