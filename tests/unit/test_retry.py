"""The one retry loop: its waits and its edges. Its bounds under a real rule (at most
``retries`` more attempts, only what ``retry_if`` accepts, none once the time budget is spent)
and its cost when nothing fails (no import): tests/unit/storage/test_retry.py."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from majob import retry
from majob.retry import call_retrying


class Busy(Exception):
    """A failure the loop retries."""


def _transient(error: BaseException) -> bool:
    return isinstance(error, Busy)


def test_no_retries_is_one_attempt_even_below_zero() -> None:
    calls: list[int] = []

    def busy() -> None:
        calls.append(1)
        raise Busy()

    for retries in (0, -1):
        with pytest.raises(Busy):
            call_retrying(busy, retry_if=_transient, retries=retries, timeout=60.0)
    assert calls == [1, 1]


def test_the_waits_double_up_to_the_cap_plus_jitter(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(retry.time, "sleep", slept.append)
    monkeypatch.setattr(retry.random, "uniform", lambda low, high: high)  # the most jitter

    def busy() -> None:
        raise Busy()

    with pytest.raises(Busy):
        call_retrying(busy, retry_if=_transient, retries=7, timeout=60.0, base_delay=0.001)
    assert slept == [min(0.001 * 2**n, retry.MAX_DELAY) + 0.001 for n in range(7)]
    slept.clear()
    with pytest.raises(Busy):  # the default base delay, as the store and the service use it
        call_retrying(busy, retry_if=_transient, retries=8, timeout=60.0)
    assert slept == [min(0.2 * 2**n, retry.MAX_DELAY) + 0.2 for n in range(8)]
    assert slept[-1] == retry.MAX_DELAY + 0.2


def test_keyboard_interrupt_is_never_retried() -> None:
    calls: list[int] = []

    def interrupted() -> None:
        calls.append(1)
        raise KeyboardInterrupt

    always: Callable[[BaseException], bool] = lambda error: True  # noqa: E731
    with pytest.raises(KeyboardInterrupt):
        call_retrying(interrupted, retry_if=always, retries=3, timeout=60.0)
    assert calls == [1]
