"""The one retry loop: at most ``retries`` more attempts, only for what ``retry_if`` accepts,
none once the time budget is spent, with exponential waits (capped) plus jitter."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest

from majob import retry
from majob.retry import call_retrying


class Busy(Exception):
    """A failure the loop retries."""


class Refused(Exception):
    """A failure the loop does not retry."""


def _transient(error: BaseException) -> bool:
    return isinstance(error, Busy)


def _run(fail: BaseException, *, retries: int, timeout: float = 60.0) -> int:
    calls: list[int] = []

    def call() -> str:
        calls.append(1)
        raise fail

    with pytest.raises(type(fail)) as raised:
        call_retrying(call, retry_if=_transient, retries=retries, timeout=timeout, base_delay=0.001)
    assert raised.value is fail
    return len(calls)


def test_at_most_retries_plus_one_attempts() -> None:
    assert _run(Busy(), retries=3) == 4
    assert _run(Busy(), retries=0) == 1
    assert _run(Busy(), retries=-1) == 1


def test_what_retry_if_refuses_is_sent_once() -> None:
    assert _run(Refused(), retries=3) == 1


def test_a_spent_time_budget_stops_after_the_first_attempt() -> None:
    assert _run(Busy(), retries=3, timeout=0.0) == 1


def test_retries_until_success() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise Busy()
        return "ok"

    done = call_retrying(flaky, retry_if=_transient, retries=5, timeout=60.0, base_delay=0.001)
    assert done == "ok"
    assert len(calls) == 3


def test_the_waits_double_up_to_the_cap_plus_jitter(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []
    monkeypatch.setattr(retry.time, "sleep", slept.append)
    monkeypatch.setattr(retry.random, "uniform", lambda low, high: high)  # the most jitter
    assert _run(Busy(), retries=7) == 8
    base = 0.001
    assert slept == [min(base * 2**n, retry.MAX_DELAY) + base for n in range(7)]
    slept.clear()

    def busy() -> None:
        raise Busy()

    with pytest.raises(Busy):  # the default base delay, as the store and the service use it
        call_retrying(busy, retry_if=_transient, retries=8, timeout=60.0)
    assert slept == [min(0.2 * 2**n, retry.MAX_DELAY) + 0.2 for n in range(8)]
    assert slept[-1] == retry.MAX_DELAY + 0.2


def test_a_call_that_succeeds_loads_no_retry_library() -> None:
    # Nearly every request succeeds at once: the loop must cost nothing then, not even an import.
    code = (
        "import json, sys\n"
        "from majob.retry import call_retrying\n"
        "assert call_retrying(lambda: 'ok', retry_if=bool, retries=3, timeout=1.0) == 'ok'\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    assert [m for m in json.loads(out) if m.split(".")[0] in ("tenacity", "asyncio")] == []


def test_keyboard_interrupt_is_never_retried() -> None:
    calls: list[int] = []

    def interrupted() -> None:
        calls.append(1)
        raise KeyboardInterrupt

    always: Callable[[BaseException], bool] = lambda error: True  # noqa: E731
    with pytest.raises(KeyboardInterrupt):
        call_retrying(interrupted, retry_if=always, retries=3, timeout=60.0)
    assert calls == [1]
