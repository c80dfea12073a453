"""What went wrong with an OBS request, as a ``StorageError``: ``storage_error`` is the one place
that turns an esdk-obs-python failure into the error tree.

The SDK returns HTTP errors as results (a status >= 300, an ``errorCode``) and raises network
errors and plain ``Exception``s; both become a ``StorageError`` subclass that names the OBS error
code, the object and the request id, and never the secret key. An answer the SDK could not parse
(it then hands back no body) is a ``StorageError`` too (``malformed``).
"""

from __future__ import annotations

import http.client
import os
import socket
import ssl
from collections.abc import Sequence
from typing import Any

from majob.errors import (
    StorageAuthError,
    StorageError,
    StorageIntegrityError,
    StorageNotFound,
    StorageUnreachable,
)
from majob.masking import Masker

AUTH_CODES = frozenset(
    {
        "SignatureDoesNotMatch",
        "InvalidAccessKeyId",
        "AccessDenied",
        "RequestTimeTooSkewed",
        "ExpiredToken",
        "InvalidToken",
        "InvalidSecurity",
        "TokenRefreshRequired",
        "AllAccessDisabled",
        # The account's or the user's state (OBS server-side error codes, all 403 Forbidden).
        "AccessForbidden",
        "AccountProblem",
        "DeregisterUserId",
        "FrozenUserId",
    }
)
NOT_FOUND_CODES = frozenset({"NoSuchKey", "NoSuchBucket", "NoSuchUpload"})
INTEGRITY_CODES = frozenset({"BadDigest", "InvalidDigest", "XAmzContentSHA256Mismatch"})

# Failures of the network: whatever majob's code was doing, the request did not get through.
NETWORK_ERRORS: tuple[type[BaseException], ...] = (
    ConnectionError,
    TimeoutError,
    socket.gaierror,
    socket.herror,
    ssl.SSLError,
    http.client.HTTPException,
)


def storage_error(
    failure: object,
    *,
    action: str,
    bucket: str | None = None,
    key: str | None = None,
    secrets: Sequence[str] = (),
) -> StorageError:
    """The one mapping from an SDK failure (a returned result with status >= 300, or a raised
    exception) to the ``StorageError`` tree. ``secrets`` are masked in every message."""
    clean = Masker(secrets).text
    where: dict[str, Any] = {"bucket": bucket, "key": key}
    if isinstance(failure, BaseException):
        return _raised_error(failure, action, clean(str(failure) or type(failure).__name__), where)
    status = int(getattr(failure, "status", 0) or 0)
    code = getattr(failure, "errorCode", None) or None
    message = clean(str(getattr(failure, "errorMessage", None) or getattr(failure, "reason", "")))
    request_id = getattr(failure, "requestId", None) or None
    text = f"{action}: {message}" if message else f"{action}: OBS answered HTTP {status}"
    details: dict[str, Any] = {**where, "code": code, "request_id": request_id, "status": status}
    if code in AUTH_CODES or (status == 403 and code is None):
        return StorageAuthError(
            text,
            hint="check the access key and secret key (HUAWEICLOUD_SDK_AK / HUAWEICLOUD_SDK_SK "
            "or the credentials file) and the bucket's permissions",
            **details,
        )
    if code in NOT_FOUND_CODES or status == 404:
        return StorageNotFound(text, **details)
    if code in INTEGRITY_CODES:
        return StorageIntegrityError(text, **details)
    return StorageError(text, **details)


def _raised_error(
    failure: BaseException, action: str, reason: str, where: dict[str, Any]
) -> StorageError:
    """An exception the SDK or the network raised (``reason``: its text, masked)."""
    if isinstance(failure, socket.gaierror):
        return StorageUnreachable(
            f"{action}: cannot resolve the OBS host ({reason})",
            hint="check MAJOB_OBS_ENDPOINT / MAJOB_OBS_REGION and the network",
            **where,
        )
    if isinstance(failure, TimeoutError):
        return StorageUnreachable(
            f"{action}: OBS did not answer in time ({reason})",
            hint="check the endpoint and the network, or raise MAJOB_OBS_TIMEOUT",
            **where,
        )
    if isinstance(failure, ConnectionRefusedError):
        return StorageUnreachable(
            f"{action}: connection refused by the OBS endpoint",
            hint="check MAJOB_OBS_ENDPOINT (is the emulator running?)",
            **where,
        )
    if isinstance(failure, (OSError, http.client.HTTPException)):
        return StorageUnreachable(
            f"{action}: the connection to OBS failed ({type(failure).__name__}: {reason})",
            **where,
        )
    return StorageError(f"{action} failed: {reason}", **where)


def raised_in(error: BaseException, package_dir: str) -> bool:
    """Whether the innermost frame of ``error``'s traceback is in ``package_dir``."""
    tb = error.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(package_dir)


def malformed(action: str, what: str, *, bucket: str | None, key: str | None) -> StorageError:
    """The error for an answer majob cannot read (a torn or unparsable response)."""
    return StorageError(
        f"{action}: OBS sent {what} that majob cannot read",
        hint="try again; if it persists, run with MAJOB_DEBUG=1 and report the endpoint",
        bucket=bucket,
        key=key,
    )
