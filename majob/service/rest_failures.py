"""What went wrong with a ModelArts call, as a ``ServiceError``: ``service_error`` is the one
mapping from an SDK or ``requests`` failure to the error tree, secrets masked in every message;
``is_retryable`` says which of them an idempotent call sends again."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from majob.errors import ServiceAuthError, ServiceError, ServiceNotFound, ServiceUnreachable
from majob.masking import Masker
from majob.retry import TRANSIENT_STATUS

#: Codes the gateway and IAM use for a refused signature or token (besides 401/403).
AUTH_CODES = frozenset({"APIGW.0301", "APIGW.0101", "APIGW.0303", "APIGW.0305"})


def service_error(
    failure: BaseException, *, action: str, secrets: Sequence[str] = ()
) -> ServiceError:
    """The one mapping from an SDK (or ``requests``) failure to the ``ServiceError`` tree;
    ``secrets`` are masked in every message."""
    clean = Masker(secrets).text
    status = getattr(failure, "status_code", None)
    if isinstance(status, int):
        code = str(getattr(failure, "error_code", "") or "") or None
        if code == str(status):
            code = None  # the SDK puts the status there when the body had no code
        message = clean(str(getattr(failure, "error_msg", "") or f"HTTP {status}"))
        details: dict[str, Any] = {
            "code": code,
            "remedy": clean(str(getattr(failure, "error_solution", "") or "")) or None,
            "request_id": getattr(failure, "request_id", None) or None,
            "status": status,
        }
        text = f"{action}: {message}"
        if status == 404:
            return ServiceNotFound(text, **details)
        if status in (401, 403) or code in AUTH_CODES:
            return ServiceAuthError(
                text,
                hint="check the access key and secret key (HUAWEICLOUD_SDK_AK / "
                "HUAWEICLOUD_SDK_SK or the credentials file) and the profile's project_id",
                **details,
            )
        return ServiceError(text, **details)
    name = type(failure).__name__
    reason = clean(str(getattr(failure, "error_msg", "") or failure) or name)
    if "Timeout" in name or "timed out" in reason.lower():
        return ServiceUnreachable(
            f"{action}: ModelArts did not answer in time ({name})",
            hint="check the endpoint and the network, or raise MAJOB_MODELARTS_TIMEOUT",
        )
    if "Connection" in name or "HostUnreachable" in name or isinstance(failure, OSError):
        return ServiceUnreachable(
            f"{action}: cannot reach ModelArts ({shortened(reason)})",
            hint="check the profile's endpoint or MAJOB_MODELARTS_ENDPOINT "
            "(for the emulator: is `majob emulator status` running?)",
        )
    return ServiceError(f"{action} failed: {name}: {shortened(reason)}")


def shortened(text: str, limit: int = 200) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_retryable(error: BaseException) -> bool:
    """Worth another try for an idempotent call: a transient status, or the connection failed."""
    if isinstance(error, ServiceUnreachable):
        return True
    if isinstance(error, (ServiceAuthError, ServiceNotFound)):
        return False
    return isinstance(error, ServiceError) and (error.status or 0) in TRANSIENT_STATUS
