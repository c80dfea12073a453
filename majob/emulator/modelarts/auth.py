"""The SDK-HMAC-SHA256 check API Gateway runs before ModelArts sees a request.

It recomputes the signature exactly as ``huaweicloudsdkcore.signer.Signer`` does (reference
modelarts.md §2.1): the canonical request is the method, the path with each segment URL-encoded
(safe ``~``) and a trailing ``/``, the query sorted and encoded, the signed headers as
``name:trimmed-value`` lines, their names, and the hex SHA-256 of the body (the
``X-Sdk-Content-Sha256`` header's value when sent, the empty hash for no body).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from urllib.parse import quote, unquote

from majob.emulator.modelarts.errors import AUTH_FAILED, ModelArtsError

ALGORITHM = "SDK-HMAC-SHA256"
DATE_FORMAT = "%Y%m%dT%H%M%SZ"
EMPTY_HASH = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
MAX_SKEW_SECONDS = 15 * 60
_AUTHORIZATION = re.compile(
    r"^SDK-HMAC-SHA256\s+Access=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$"
)


def _encode(text: str) -> str:
    return quote(text, safe="~")


def canonical_uri(path: str) -> str:
    uri = "/".join(_encode(segment) for segment in unquote(path).split("/"))
    return uri if uri.endswith("/") else uri + "/"


def canonical_query(pairs: Sequence[tuple[str, str]]) -> str:
    return "&".join(f"{_encode(k)}={_encode(v)}" for k, v in sorted(pairs))


def string_to_sign(
    method: str,
    path: str,
    query: Sequence[tuple[str, str]],
    headers: Mapping[str, str],
    signed: Sequence[str],
    body: bytes,
) -> str:
    """What the client signed (``headers`` keyed by lower-case name)."""
    lines = "".join(f"{name}:{headers.get(name, '').strip()}\n" for name in signed)
    if not body:
        payload = EMPTY_HASH
    else:
        payload = headers.get("x-sdk-content-sha256") or hashlib.sha256(body).hexdigest()
    canonical = "\n".join(
        [
            method.upper(),
            canonical_uri(path),
            canonical_query(query),
            lines,
            ";".join(signed),
            payload,
        ]
    )
    digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    return f"{ALGORITHM}\n{headers.get('x-sdk-date', '')}\n{digest}"


def sign(secret_key: str, text: str) -> str:
    return hmac.new(secret_key.encode("utf-8"), text.encode("utf-8"), hashlib.sha256).hexdigest()


def _refuse(message: str, solution: str) -> ModelArtsError:
    return ModelArtsError(401, AUTH_FAILED, message, solution)


def verify(
    *,
    method: str,
    path: str,
    query: Sequence[tuple[str, str]],
    headers: Mapping[str, str],
    body: bytes,
    credentials: Mapping[str, str],
    now: datetime | None = None,
) -> str:
    """The access key of a correctly signed request; ``ModelArtsError`` (401) otherwise. The
    error never contains the secret key or the expected signature."""
    match = _AUTHORIZATION.match(headers.get("authorization", "").strip())
    if match is None:
        raise _refuse(
            "Incorrect IAM authentication information: the request is not signed with "
            "SDK-HMAC-SHA256",
            "sign requests with an AK/SK (huaweicloudsdkcore BasicCredentials)",
        )
    access_key, signed_text, signature = match.groups()
    secret_key = credentials.get(access_key)
    if secret_key is None:
        raise _refuse(
            f"Incorrect IAM authentication information: unknown access key {access_key}",
            "use the emulator's test access key (`majob emulator status` shows it)",
        )
    try:
        sent = datetime.strptime(headers.get("x-sdk-date", ""), DATE_FORMAT)
    except ValueError:
        raise _refuse(
            "Incorrect IAM authentication information: missing or malformed X-Sdk-Date",
            "send X-Sdk-Date as YYYYMMDDTHHMMSSZ (UTC)",
        ) from None
    current = now or datetime.now(timezone.utc)
    skew = abs((current.replace(tzinfo=None) - sent).total_seconds())
    if skew > MAX_SKEW_SECONDS:
        raise _refuse(
            "Incorrect IAM authentication information: the request time is more than 15 "
            "minutes from the server's",
            "check this machine's clock",
        )
    signed = signed_text.split(";")
    if "host" not in signed or "x-sdk-date" not in signed:
        raise _refuse(
            "Incorrect IAM authentication information: Host and X-Sdk-Date must be signed",
            "sign requests with huaweicloudsdkcore's signer",
        )
    expected = sign(secret_key, string_to_sign(method, path, query, headers, signed, body))
    if not hmac.compare_digest(expected, signature):
        raise _refuse(
            "Incorrect IAM authentication information: verify aksk signature fail",
            "check the secret key that goes with the access key",
        )
    return access_key
