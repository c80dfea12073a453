"""Transient failures are retried, refusals are not."""

from __future__ import annotations

import pytest

from majob.errors import (
    StorageAuthError,
    StorageError,
    StorageIntegrityError,
    StorageNotFound,
    StorageUnreachable,
)
from majob.storage.retry import is_transient, with_retries


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (StorageError("busy", status=503), True),
        (StorageError("slow", code="SlowDown", status=400), True),
        (StorageUnreachable("dropped by an endpoint that answered before"), True),
        (ConnectionResetError(), True),
        (StorageAuthError("no", code="SignatureDoesNotMatch", status=403), False),
        (StorageNotFound("no", status=404), False),
        (StorageIntegrityError("bad digest", status=400), False),
        (StorageError("bad request", status=400), False),
        (ValueError("bug"), False),
    ],
)
def test_is_transient(error: BaseException, transient: bool) -> None:
    assert is_transient(error) is transient


def test_network_failures_of_a_silent_endpoint_are_final() -> None:
    assert not is_transient(StorageUnreachable("refused"), endpoint_answered=False)
    assert not is_transient(ConnectionResetError(), endpoint_answered=False)
    assert is_transient(StorageError("busy", status=503), endpoint_answered=False)
    calls: list[int] = []

    def refused() -> str:
        calls.append(1)
        raise StorageUnreachable("connection refused")

    with pytest.raises(StorageUnreachable):
        with_retries(refused, base_delay=0.001, endpoint_answered=False)
    assert len(calls) == 1


def test_retries_until_success_and_gives_up() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise StorageError("busy", status=503)
        return "ok"

    assert with_retries(flaky, base_delay=0.001) == "ok"
    assert len(calls) == 3

    def refused() -> str:
        calls.append(1)
        raise StorageAuthError("wrong key", status=403)

    calls.clear()
    with pytest.raises(StorageAuthError):
        with_retries(refused, base_delay=0.001)
    assert len(calls) == 1

    def busy() -> str:
        calls.append(1)
        raise StorageError("busy", status=503)

    calls.clear()
    with pytest.raises(StorageError):
        with_retries(busy, attempts=3, base_delay=0.001)
    assert len(calls) == 3
