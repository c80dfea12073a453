"""The one retry rule for storage requests, applied in one place: ``ObsObjectStore._call``.

A request is sent again when OBS had a bad moment (a 5xx answer, or one of the codes below) or the
connection failed; never on a refusal (wrong key, missing object, bad digest), which would fail
the same way again. At most ``retries`` more requests, with exponential back-off and jitter, and
no new attempt once ``timeout`` seconds have passed since the first: one object costs at most
``retries + 1`` requests and about one time budget. Callers above the store (sync, download,
listing) do not retry again: they would multiply both bounds.
"""

from __future__ import annotations

from tenacity import (
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
    wait_random,
)

from majob.errors import (
    StorageAuthError,
    StorageError,
    StorageIntegrityError,
    StorageNotFound,
    StorageUnreachable,
)

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
    return Retrying(
        stop=stop_after_attempt(max(0, retries) + 1) | stop_after_delay(timeout),
        wait=wait_exponential(multiplier=base_delay, max=4.0) + wait_random(0, base_delay),
        retry=retry_if_exception(is_transient),
        reraise=True,
    )
