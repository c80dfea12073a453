"""One retry rule: transient failures are retried, refusals are not, within both bounds."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable

import pytest

from majob.errors import (
    StorageAuthError,
    StorageError,
    StorageIntegrityError,
    StorageNotFound,
    StorageUnreachable,
)
from majob.storage import obs
from majob.storage.retry import call_retrying, is_transient, request_retrying


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (StorageError("busy", status=503), True),
        (StorageError("slow", code="SlowDown", status=400), True),
        (StorageError("throttled", code="Throttling", status=400), True),
        (StorageUnreachable("dropped"), True),
        (StorageAuthError("no", code="SignatureDoesNotMatch", status=403), False),
        (StorageNotFound("no", status=404), False),
        (StorageIntegrityError("bad digest", status=400), False),
        (StorageError("bad request", status=400), False),
        (ValueError("bug"), False),
        (ConnectionResetError(), False),  # raw: the store maps network errors first
    ],
)
def test_is_transient(error: BaseException, transient: bool) -> None:
    assert is_transient(error) is transient


def test_the_store_uses_the_same_rule() -> None:
    # Throttling used to be retried by the store and not by sync: one rule now.
    assert obs.is_retryable is is_transient


def _with_tenacity(call: Callable[[], str], retries: int, timeout: float) -> str:
    return request_retrying(retries, timeout, base_delay=0.001)(call)


def _first_alone(call: Callable[[], str], retries: int, timeout: float) -> str:
    return call_retrying(call, retries, timeout, base_delay=0.001)


# The store's path (the first attempt outside tenacity) must keep the rule of the plain loop.
LOOPS = pytest.mark.parametrize("loop", [_with_tenacity, _first_alone])


def _run(
    loop: Callable[[Callable[[], str], int, float], str],
    fail: BaseException,
    *,
    retries: int,
    timeout: float = 60.0,
) -> int:
    calls: list[int] = []

    def call() -> str:
        calls.append(1)
        raise fail

    with pytest.raises(type(fail)) as raised:
        loop(call, retries, timeout)
    assert raised.value is fail
    return len(calls)


@LOOPS
def test_at_most_retries_plus_one_requests(
    loop: Callable[[Callable[[], str], int, float], str],
) -> None:
    assert _run(loop, StorageError("busy", status=503), retries=3) == 4
    assert _run(loop, StorageError("busy", status=503), retries=0) == 1


@LOOPS
def test_refusals_are_sent_once(loop: Callable[[Callable[[], str], int, float], str]) -> None:
    assert _run(loop, StorageAuthError("wrong key", status=403), retries=3) == 1
    assert _run(loop, ValueError("a bug"), retries=3) == 1


@LOOPS
def test_retries_until_success(loop: Callable[[Callable[[], str], int, float], str]) -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise StorageError("busy", status=503)
        return "ok"

    assert loop(flaky, 5, 60.0) == "ok"
    assert len(calls) == 3


def test_a_spent_time_budget_stops_after_the_first_attempt() -> None:
    # The budget runs from the first attempt, which call_retrying sends before tenacity starts.
    assert _run(_first_alone, StorageError("busy", status=503), retries=3, timeout=0.0) == 1


def test_a_request_that_succeeds_loads_no_retry_machinery() -> None:
    # What a sync imports and runs when nothing fails: neither tenacity nor filelock (a no-change
    # sync writes no state) is loaded, each ~10-25 ms of every start.
    code = (
        "import json, sys\n"
        "import majob.storage.obs, majob.storage.sync\n"
        "from majob.storage.retry import call_retrying\n"
        "assert call_retrying(lambda: 'ok', 3, 1.0) == 'ok'\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    loaded = json.loads(out)
    assert "majob.storage.sync" in loaded
    assert [m for m in loaded if m.split(".")[0] in ("tenacity", "filelock")] == []
