"""Which storage failures are worth another try at the level of a whole transfer.

The store already retries each request (5xx and dropped connections, bounded by its timeout).
Sync adds one more layer around a whole file, part or page: after the store gave up on a server
error (5xx, ``RequestTimeout``, ``SlowDown``), or on a connection dropped by an endpoint that has
answered before in this run, the transfer is tried again after a short exponential back-off.
Refusals (wrong key, missing bucket, bad digest) never are: they would fail the same way again.
Nor is an endpoint that never answered: the store has already spent its time budget on it, and
the user is owed a clear error within the configured time-out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from majob.errors import (
    StorageAuthError,
    StorageError,
    StorageIntegrityError,
    StorageNotFound,
    StorageUnreachable,
)

T = TypeVar("T")
_TRANSIENT_CODES = frozenset({"RequestTimeout", "SlowDown", "InternalError", "ServiceUnavailable"})


def is_transient(error: BaseException, *, endpoint_answered: bool = True) -> bool:
    """Whether ``error`` may go away when the same request is sent again. A network failure
    counts only once the endpoint has ``endpoint_answered`` (it is up; the connection dropped)."""
    if isinstance(error, (StorageAuthError, StorageNotFound, StorageIntegrityError)):
        return False
    if isinstance(error, StorageUnreachable):
        return endpoint_answered
    if isinstance(error, StorageError):
        return (error.status or 0) >= 500 or error.code in _TRANSIENT_CODES
    return endpoint_answered and isinstance(error, ConnectionResetError)


def with_retries(
    call: Callable[[], T],
    *,
    attempts: int = 3,
    base_delay: float = 0.1,
    endpoint_answered: bool = True,
) -> T:
    """Run ``call``, again on a transient failure (at most ``attempts`` times in all). Pass
    ``endpoint_answered=False`` for the first request of a run: an endpoint that cannot be
    reached fails at once instead of being tried again."""
    retrying = Retrying(
        stop=stop_after_attempt(max(1, attempts)),
        wait=wait_exponential(multiplier=base_delay, max=2.0),
        retry=retry_if_exception(lambda e: is_transient(e, endpoint_answered=endpoint_answered)),
        reraise=True,
    )
    return retrying(call)
