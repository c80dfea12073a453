"""The Signature Version 4 computations of the fake OBS's authentication (``auth.py``): the
credential scope's region check, the signing key, the canonical request and the signature.
Written from AWS's public specification, independently of any client."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from email.utils import parsedate_to_datetime
from urllib.parse import quote, unquote

from majob.emulator.obs.errors import ObsServiceError


def check_scope(region: str, expected: str | None, *, query: bool) -> None:
    """A V4 credential scoped to a region other than this service's is refused before any
    signature is computed, with the region S3 expects named in the answer."""
    if expected is None or region == expected:
        return
    if query:
        raise ObsServiceError(
            400,
            "AuthorizationQueryParametersError",
            f"Error parsing the X-Amz-Credential parameter; the region '{region}' is wrong; "
            f"expecting '{expected}'",
            Region=expected,
        )
    raise ObsServiceError(
        400,
        "AuthorizationHeaderMalformed",
        f"The authorization header is malformed; the region '{region}' is wrong; "
        f"expecting '{expected}'",
        Region=expected,
    )


def v4_sign(key: bytes, amz_date: str, scope: str, canonical: str) -> str:
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode("utf-8")).hexdigest()]
    )
    return hmac.new(key, to_sign.encode("utf-8"), hashlib.sha256).hexdigest()


def basic_time(http_date: str) -> str:
    """``20261202T134611Z`` from an HTTP date: what a client without x-amz-date signs."""
    try:
        return parsedate_to_datetime(http_date).strftime("%Y%m%dT%H%M%SZ")
    except (TypeError, ValueError):
        return http_date


def v4_signing_key(secret: str, date: str, region: str, service: str) -> bytes:
    key = ("AWS4" + secret).encode("utf-8")
    for part in (date, region, service, "aws4_request"):
        key = hmac.new(key, part.encode("utf-8"), hashlib.sha256).digest()
    return key


def _v4_encode(text: str) -> str:
    return quote(text, safe="-_.~")


def v4_canonical_requests(
    method: str,
    raw_path: str,
    query: Sequence[tuple[str, str]],
    headers: Mapping[str, str],
    signed_headers: list[str],
    payload: str,
) -> list[str]:
    """The canonical request, for the wire path and for the path re-encoded the AWS way."""
    canonical_query = "&".join(
        f"{name}={value}"
        for name, value in sorted((_v4_encode(n), _v4_encode(v)) for n, v in query)
    )
    canonical_headers = "".join(
        f"{name}:{' '.join(headers.get(name, '').split())}\n" for name in signed_headers
    )
    paths = dict.fromkeys([raw_path, quote(unquote(raw_path), safe="/~")])
    return [
        "\n".join(
            [method, path, canonical_query, canonical_headers, ";".join(signed_headers), payload]
        )
        for path in paths
    ]
