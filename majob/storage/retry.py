"""The one retry rule for storage requests, applied in one place: ``ObsObjectStore._call``.

A request is sent again when OBS had a bad moment (a transient status of ``majob.retry``, or one
of the codes below) or the connection failed; never on a refusal (wrong key, missing object, bad
digest), which would fail the same way again. The loop is ``majob.retry.call_retrying``: at most
``retries`` more requests, with exponential back-off and jitter, and no new attempt once
``timeout`` seconds have passed since the first: one object costs at most ``retries + 1``
requests and about one time budget. Callers above the store (sync, download, listing) do not
retry again: they would multiply both bounds.
"""

from __future__ import annotations

from majob.errors import (
    StorageAuthError,
    StorageError,
    StorageIntegrityError,
    StorageNotFound,
    StorageUnreachable,
)
from majob.retry import TRANSIENT_STATUS

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
        return (error.status or 0) in TRANSIENT_STATUS or error.code in TRANSIENT_CODES
    return False
