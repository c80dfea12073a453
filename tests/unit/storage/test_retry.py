"""One retry rule for storage: transient failures are retried, refusals are not (the loop
itself, its bounds and waits: tests/unit/test_retry.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from types import SimpleNamespace

import pytest

from majob import retry
from majob.errors import (
    StorageAuthError,
    StorageError,
    StorageIntegrityError,
    StorageNotFound,
    StorageUnreachable,
)
from majob.retry import call_retrying
from majob.storage.config import Credentials, ObsConfig
from majob.storage.obs import ObsObjectStore
from majob.storage.retry import is_transient


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (StorageError("busy", status=503), True),
        (StorageError("throttled", status=429), True),
        (StorageError("bad gateway", status=502), True),
        (StorageError("not implemented", status=501), False),  # the same again: not transient
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


def _run(fail: BaseException, *, retries: int, timeout: float = 60.0) -> int:
    calls: list[int] = []

    def call() -> str:
        calls.append(1)
        raise fail

    with pytest.raises(type(fail)) as raised:
        call_retrying(
            call, retry_if=is_transient, retries=retries, timeout=timeout, base_delay=0.001
        )
    assert raised.value is fail
    return len(calls)


def test_at_most_retries_plus_one_requests() -> None:
    assert _run(StorageError("busy", status=503), retries=3) == 4
    assert _run(StorageError("busy", status=503), retries=0) == 1


def test_refusals_are_sent_once() -> None:
    assert _run(StorageAuthError("wrong key", status=403), retries=3) == 1
    assert _run(ValueError("a bug"), retries=3) == 1


def test_retries_until_success() -> None:
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise StorageError("busy", status=503)
        return "ok"

    assert call_retrying(flaky, retry_if=is_transient, retries=5, timeout=60.0) == "ok"
    assert len(calls) == 3


def test_a_spent_time_budget_stops_after_the_first_attempt() -> None:
    assert _run(StorageError("busy", status=503), retries=3, timeout=0.0) == 1


def test_the_store_retries_by_this_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry.time, "sleep", lambda seconds: None)
    # Throttling used to be retried by the store and not by sync: one rule now, the store's.
    store = ObsObjectStore(
        ObsConfig(endpoint="http://127.0.0.1:9", retries=3),
        Credentials("AK", "SK"),
    )
    answers: list[object] = [
        StorageError("slow", code="Throttling", status=400),
        StorageError("busy", status=503),
        SimpleNamespace(status=200),
    ]
    calls: list[int] = []

    def call() -> object:
        calls.append(1)
        answer = answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    try:
        assert store._call("head object", "b", "k", call) == SimpleNamespace(status=200)
        assert len(calls) == 3
        with pytest.raises(StorageAuthError):  # a refusal: sent once
            store._call("head object", "b", "k", _raises(StorageAuthError("no", status=403)))
    finally:
        store.close()


def _raises(error: BaseException) -> Callable[[], object]:
    def call() -> object:
        raise error

    return call


def test_a_request_that_succeeds_loads_no_retry_machinery() -> None:
    # What a sync imports and runs when nothing fails: neither tenacity (nor the asyncio it
    # brings) nor filelock (a no-change sync writes no state) is loaded, each ~10-80 ms of every
    # start. The ModelArts client shares the retry loop: it loads neither either.
    code = (
        "import json, sys\n"
        "import majob.storage.obs, majob.storage.sync, majob.service.rest\n"
        "from majob.retry import call_retrying\n"
        "from majob.storage.retry import is_transient\n"
        "assert call_retrying(lambda: 'ok', retry_if=is_transient, retries=3, timeout=1.0) == 'ok'\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    loaded = json.loads(out)
    assert "majob.storage.sync" in loaded
    assert [m for m in loaded if m.split(".")[0] in ("tenacity", "asyncio", "filelock")] == []
