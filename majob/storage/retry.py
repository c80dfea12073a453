"""The one retry rule for storage requests, applied in one place: ``ObsObjectStore._call``.

A request is sent again when OBS had a bad moment (a 5xx answer, or one of the codes below) or the
connection failed; never on a refusal (wrong key, missing object, bad digest), which would fail
the same way again. At most ``retries`` more requests, with exponential back-off and jitter, and
no new attempt once ``timeout`` seconds have passed since the first: one object costs at most
``retries + 1`` requests and about one time budget. Callers above the store (sync, download,
listing) do not retry again: they would multiply both bounds.

``call_retrying`` sends the first attempt on its own and brings in tenacity only after a
transient failure: nearly every request succeeds at once, and tenacity's loop costs ~35 us per
call (a tenth of what the SDK spends on a small PUT) and its import ~15-25 ms per start.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from majob.errors import (
    StorageAuthError,
    StorageError,
    StorageIntegrityError,
    StorageNotFound,
    StorageUnreachable,
)

if TYPE_CHECKING:
    from tenacity import Retrying

T = TypeVar("T")

TRANSIENT_CODES = frozenset(
    {"InternalError", "ServiceUnavailable", "SlowDown", "RequestTimeout", "Throttling"}
)


def is_transient(error: BaseException) -> bool:
    """Whether ``error`` may go away when the same request is sent again."""
    if isinstance(error, (StorageAuthError, StorageNotFound, StorageIntegrityError)):
        return False
    if isinstance(error, StorageUnreachable):
        return True
    if isinstance(error, StorageError):
        return (error.status or 0) >= 500 or error.code in TRANSIENT_CODES
    return False


def request_retrying(retries: int, timeout: float, *, base_delay: float = 0.2) -> Retrying:
    """The retry loop for one request: ``retries`` more attempts within ``timeout`` seconds."""
    from tenacity import (
        Retrying,
        retry_if_exception,
        stop_after_attempt,
        stop_after_delay,
        wait_exponential,
        wait_random,
    )

    return Retrying(
        stop=stop_after_attempt(max(0, retries) + 1) | stop_after_delay(timeout),
        wait=wait_exponential(multiplier=base_delay, max=4.0) + wait_random(0, base_delay),
        retry=retry_if_exception(is_transient),
        reraise=True,
    )


def call_retrying(
    call: Callable[[], T], retries: int, timeout: float, *, base_delay: float = 0.2
) -> T:
    """``call()`` under the rule of ``request_retrying``, the same attempts and waits; the first
    attempt runs outside tenacity (see the module docstring)."""
    started = time.monotonic()
    try:
        return call()
    except StorageError as error:
        if retries <= 0 or not is_transient(error):
            raise
        first = error
    # The loop replays the first failure as its attempt 1 (it then waits as after any attempt
    # 1), with the time budget that attempt left.
    replay: list[StorageError] = [first]

    def attempt() -> T:
        if replay:
            raise replay.pop()
        return call()

    left = max(0.0, timeout - (time.monotonic() - started))
    return request_retrying(retries, left, base_delay=base_delay)(attempt)
