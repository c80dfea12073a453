"""One retry rule: transient failures are retried, refusals are not, within both bounds."""

from __future__ import annotations

import pytest

from majob.errors import (
    StorageAuthError,
    StorageError,
    StorageIntegrityError,
    StorageNotFound,
    StorageUnreachable,
)
from majob.storage import obs
from majob.storage.retry import is_transient, request_retrying


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


def _run(fail: BaseException, *, retries: int, timeout: float = 60.0) -> int:
    calls: list[int] = []

    def call() -> str:
        calls.append(1)
        raise fail

    with pytest.raises(type(fail)):
        request_retrying(retries, timeout, base_delay=0.001)(call)
    return len(calls)


def test_at_most_retries_plus_one_requests() -> None:
    assert _run(StorageError("busy", status=503), retries=3) == 4
    assert _run(StorageError("busy", status=503), retries=0) == 1


def test_refusals_are_sent_once() -> None:
    assert _run(StorageAuthError("wrong key", status=403), retries=3) == 1


def test_retries_until_success() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise StorageError("busy", status=503)
        return "ok"

    assert request_retrying(5, 60.0, base_delay=0.001)(flaky) == "ok"
    assert len(calls) == 3
