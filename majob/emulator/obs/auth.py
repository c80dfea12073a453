"""Request authentication of the fake OBS: V2 and OBS (HMAC-SHA1) and V4 (HMAC-SHA256).

Written from the public signing specifications, independently of any client, so that a client
bug (or a wrong secret key) shows up as the ``403 SignatureDoesNotMatch`` real OBS would send.
Both header authentication and presigned URLs (query authentication, V2/OBS and V4, with
their expiry) are checked.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from base64 import b64encode
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from urllib.parse import unquote

from majob.emulator.obs.errors import ObsServiceError
from majob.emulator.obs.sigv4 import (
    basic_time,
    check_scope,
    v4_canonical_requests,
    v4_sign,
    v4_signing_key,
)

MAX_SKEW_SECONDS = 15 * 60

# Query parameters that are part of the V2/OBS canonical resource (the union of the S3 and OBS
# lists; compared case-sensitively as the clients send them).
SUB_RESOURCES = frozenset(
    {
        "acl", "append", "apiversion", "backtosource", "cors", "customdomain", "delete",
        "deletebucket", "directcoldaccess", "encryption", "inventory", "length", "lifecycle",
        "location", "logging", "metadata", "mirrorBackToSource", "modify", "name", "notification",
        "obscompresspolicy", "obsworkflowtriggerpolicy", "partNumber", "policy", "position",
        "quota", "rename", "replication", "requestPayment", "response-cache-control",
        "response-content-disposition", "response-content-encoding", "response-content-language",
        "response-content-type", "response-expires", "restore", "select", "select-type",
        "storageClass", "storageinfo", "storagePolicy", "tagging", "torrent", "truncate",
        "uploadId", "uploads", "versionId", "versioning", "versions", "website", "x-image-process",
        "x-image-save-bucket", "x-image-save-object", "x-obs-security-token",
        "x-workflow-create", "x-workflow-execution-state", "x-workflow-execution-type",
        "x-workflow-limit", "x-workflow-next-marker", "x-workflow-prefix",
        "x-workflow-start-time", "x-workflow-template-name",
    }
)  # fmt: skip
_LOWER_SUB_RESOURCES = frozenset(name.lower() for name in SUB_RESOURCES)

_V2_HEADER = re.compile(r"^(AWS|OBS) ([^:\s]+):(\S+)$")
_V4_FIELD = re.compile(r"(\w+)=([^,]*)")


@dataclass(frozen=True)
class SignedRequest:
    """What signing covers, taken from the request as it arrived."""

    method: str
    raw_path: str  # percent-encoded as on the wire, without the query
    query: Sequence[tuple[str, str]]  # decoded, in order, blanks kept
    headers: Mapping[str, str]  # lower-case names


def _denied(code: str, message: str, **extra: str) -> ObsServiceError:
    return ObsServiceError(403, code, message, **extra)


def _signature_mismatch(access_key: str, **shown: str) -> ObsServiceError:
    """403 SignatureDoesNotMatch; ``shown``: what S3 adds so a client can find the difference
    (``StringToSign``, ``SignatureProvided``: neither holds a secret)."""
    return _denied(
        "SignatureDoesNotMatch",
        "The request signature we calculated does not match the signature you provided. "
        "Check your key and signing method.",
        AWSAccessKeyId=access_key,
        **shown,
    )


def verify(
    request: SignedRequest,
    credentials: Mapping[str, str],
    tokens: Mapping[str, str] | None = None,
    *,
    region: str | None = None,
) -> str | None:
    """Check the request's signature; return its access key, None for anonymous requests.

    Raises ``ObsServiceError`` 403 ``InvalidAccessKeyId`` for an unknown key,
    ``SignatureDoesNotMatch`` when the signature was made with another secret key and
    ``InvalidToken`` when ``tokens`` wants a security token (temporary credentials) for the
    access key and the request carries another one or none; with ``region``, a V4 signature
    scoped to another region is 400 (``AuthorizationHeaderMalformed`` in the header,
    ``AuthorizationQueryParametersError`` in a presigned URL), as S3 refuses it.
    """
    access_key = _verify_signature(request, credentials, region)
    wanted = (tokens or {}).get(access_key or "")
    if wanted is not None:
        sent = request.headers.get("x-obs-security-token") or request.headers.get(
            "x-amz-security-token"
        )
        if sent is None or not hmac.compare_digest(sent, wanted):
            raise _denied(
                "InvalidToken", "The provided security token is malformed or otherwise invalid."
            )
    return access_key


def _verify_signature(
    request: SignedRequest, credentials: Mapping[str, str], region: str | None
) -> str | None:
    authorization = request.headers.get("authorization", "")
    if not authorization:
        names = {name for name, _ in request.query}
        if "X-Amz-Signature" in names or "X-Amz-Credential" in names:
            return _verify_v4_query(request, credentials, region)
        if "Signature" in names:
            return _verify_v2_query(request, credentials)
        return None
    if authorization.startswith("AWS4-HMAC-SHA256 "):
        return _verify_v4(request, authorization, credentials, region)
    match = _V2_HEADER.match(authorization)
    if match is None:
        raise ObsServiceError(
            400, "InvalidArgument", "Authorization header is invalid -- one and only one ' '"
        )
    family, access_key, signature = match.groups()
    secret = _secret(access_key, credentials)
    _check_skew(request.headers, "x-obs-date" if family == "OBS" else "x-amz-date")
    prefix = "x-obs-" if family == "OBS" else "x-amz-"
    resources = _v2_resources(request)
    for resource in resources:
        wanted = v2_signature(request, secret, prefix=prefix, resource=resource)
        if hmac.compare_digest(wanted, signature):
            return str(access_key)
    raise _signature_mismatch(
        access_key,
        StringToSign=v2_string_to_sign(request, prefix=prefix, resource=resources[0]),
        SignatureProvided=signature,
    )


def _expired() -> ObsServiceError:
    return _denied("AccessDenied", "Request has expired")


def _verify_v2_query(request: SignedRequest, credentials: Mapping[str, str]) -> str:
    """A V2 presigned URL (``AWSAccessKeyId``, or ``AccessKeyId`` for the OBS protocol, with
    ``Expires`` and ``Signature``): the string to sign has ``Expires`` where the date goes."""
    query = dict(request.query)
    obs = "AccessKeyId" in query
    access_key = query.get("AccessKeyId" if obs else "AWSAccessKeyId")
    expires = query.get("Expires", "")
    if not access_key or not expires.isdigit():
        raise _denied(
            "AccessDenied",
            "Query-string authentication requires the Signature, Expires and AWSAccessKeyId "
            "parameters",
        )
    secret = _secret(access_key, credentials)
    if int(expires) < time.time():
        raise _expired()
    prefix = "x-obs-" if obs else "x-amz-"
    # The string to sign has Expires in the Date line; x-*-date headers are not signed then.
    headers = {
        name: value
        for name, value in request.headers.items()
        if name not in ("date", f"{prefix}date")
    }
    presigned = SignedRequest(request.method, request.raw_path, request.query, headers)
    resources = _v2_resources(request)
    for resource in resources:
        wanted = v2_signature(presigned, secret, prefix=prefix, resource=resource, date=expires)
        if hmac.compare_digest(wanted, query.get("Signature", "")):
            return access_key
    raise _signature_mismatch(
        access_key,
        StringToSign=v2_string_to_sign(
            presigned, prefix=prefix, resource=resources[0], date=expires
        ),
        SignatureProvided=query.get("Signature", ""),
    )


def _verify_v4_query(
    request: SignedRequest, credentials: Mapping[str, str], expected_region: str | None
) -> str:
    """A V4 presigned URL (``X-Amz-Credential``, ``X-Amz-Date``, ``X-Amz-Expires``,
    ``X-Amz-SignedHeaders``, ``X-Amz-Signature``); the payload is ``UNSIGNED-PAYLOAD``."""
    query = dict(request.query)
    try:
        access_key, date, region, service, terminal = query["X-Amz-Credential"].split("/")
        amz_date = query["X-Amz-Date"]
        expires = int(query["X-Amz-Expires"])
        signed_headers = query["X-Amz-SignedHeaders"].split(";")
        signature = query["X-Amz-Signature"]
        issued = datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    except (KeyError, ValueError) as error:
        raise ObsServiceError(
            400,
            "AuthorizationQueryParametersError",
            "Query-string authentication version 4 requires the X-Amz-Algorithm, "
            "X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and "
            "X-Amz-Expires parameters.",
        ) from error
    if not 1 <= expires <= 604800:
        raise ObsServiceError(
            400,
            "AuthorizationQueryParametersError",
            "X-Amz-Expires must be less than a week (in seconds) that is 604800",
        )
    check_scope(region, expected_region, query=True)
    secret = _secret(access_key, credentials)
    if issued.timestamp() + expires < time.time():
        raise _expired()
    unsigned = [(name, value) for name, value in request.query if name != "X-Amz-Signature"]
    scope = f"{date}/{region}/{service}/{terminal}"
    key = v4_signing_key(secret, date, region, service)
    payload = request.headers.get("x-amz-content-sha256", "UNSIGNED-PAYLOAD")
    for canonical in v4_canonical_requests(
        request.method,
        request.raw_path,
        unsigned,
        request.headers,
        signed_headers,
        payload,
    ):
        if hmac.compare_digest(v4_sign(key, amz_date, scope, canonical), signature):
            return access_key
    raise _signature_mismatch(access_key)


def _secret(access_key: str, credentials: Mapping[str, str]) -> str:
    secret = credentials.get(access_key)
    if secret is None:
        raise _denied(
            "InvalidAccessKeyId",
            "The AWS Access Key Id you provided does not exist in our records.",
            AWSAccessKeyId=access_key,
        )
    return secret


def _check_skew(headers: Mapping[str, str], date_header: str) -> None:
    text = headers.get(date_header) or headers.get("date")
    if not text:
        raise _denied("AccessDenied", "AWS authentication requires a valid Date header")
    try:
        when = (
            datetime.strptime(text, "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
            if re.fullmatch(r"\d{8}T\d{6}Z", text)
            else parsedate_to_datetime(text)
        )
    except (TypeError, ValueError) as error:
        raise _denied("AccessDenied", f"Invalid date {text!r}") from error
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    skew = abs((datetime.now(timezone.utc) - when).total_seconds())
    if skew > MAX_SKEW_SECONDS:
        raise _denied(
            "RequestTimeTooSkewed",
            "The difference between the request time and the server's time is too large.",
        )


def _v2_resources(request: SignedRequest) -> list[str]:
    """Canonical resources to try: clients differ on whether the key stays percent-encoded."""
    sub = sorted(
        (name, value)
        for name, value in request.query
        if name in SUB_RESOURCES or name.lower() in _LOWER_SUB_RESOURCES
    )
    suffix = "&".join(f"{name}={value}" if value else name for name, value in sub)
    suffix = f"?{suffix}" if suffix else ""
    paths = [request.raw_path, unquote(request.raw_path)]
    if request.raw_path.count("/") == 1 and len(request.raw_path) > 1:
        # A bucket-level request: botocore signs "/bucket/" and sends "/bucket"; OBS takes both.
        paths.append(request.raw_path + "/")
    elif request.raw_path.count("/") == 2 and request.raw_path.endswith("/"):
        paths.append(request.raw_path.rstrip("/"))
    return list(dict.fromkeys(path + suffix for path in paths))


def v2_signature(
    request: SignedRequest, secret: str, *, prefix: str, resource: str, date: str | None = None
) -> str:
    """Base64 HMAC-SHA1 of the V2/OBS string to sign (``prefix`` is ``x-amz-`` or ``x-obs-``;
    ``date``: what the Date line holds instead of the headers' date, a presigned URL's
    ``Expires``)."""
    to_sign = v2_string_to_sign(request, prefix=prefix, resource=resource, date=date)
    digest = hmac.new(secret.encode("utf-8"), to_sign.encode("utf-8"), hashlib.sha1).digest()
    return b64encode(digest).decode("ascii")


def v2_string_to_sign(
    request: SignedRequest, *, prefix: str, resource: str, date: str | None = None
) -> str:
    """The V2/OBS string to sign: method, Content-MD5, Content-Type and date lines, then the
    canonical ``x-amz-``/``x-obs-`` headers and resource. The Content-Type line is the header
    the request carries (a presigned URL too): a client that adds one it did not sign, as
    urllib does for a body (``application/x-www-form-urlencoded``), no longer matches."""
    headers = request.headers
    special = {
        name: value.strip()
        for name, value in headers.items()
        if name.startswith(prefix) or (name.startswith("x-amz-") and prefix == "x-amz-")
    }
    # With an x-amz-date / x-obs-date header the Date line is empty: that header is signed.
    if date is None:
        date = "" if f"{prefix}date" in special else headers.get("date", "")
    lines = [
        request.method,
        headers.get("content-md5", ""),
        headers.get("content-type", ""),
        date,
    ]
    canonical_headers = "".join(f"{name}:{special[name]}\n" for name in sorted(special))
    return "\n".join(lines) + "\n" + canonical_headers + resource


def _verify_v4(
    request: SignedRequest,
    authorization: str,
    credentials: Mapping[str, str],
    expected_region: str | None,
) -> str:
    fields = dict(_V4_FIELD.findall(authorization[len("AWS4-HMAC-SHA256 ") :]))
    try:
        access_key, date, region, service, terminal = fields["Credential"].split("/")
        signed_headers = fields["SignedHeaders"].split(";")
        signature = fields["Signature"]
    except (KeyError, ValueError) as error:
        raise ObsServiceError(
            400, "AuthorizationHeaderMalformed", "The authorization header is malformed"
        ) from error
    check_scope(region, expected_region, query=False)
    secret = _secret(access_key, credentials)
    _check_skew(request.headers, "x-amz-date")
    amz_date = request.headers.get("x-amz-date") or basic_time(request.headers.get("date", ""))
    scope = f"{date}/{region}/{service}/{terminal}"
    key = v4_signing_key(secret, date, region, service)
    payload = request.headers.get("x-amz-content-sha256", "UNSIGNED-PAYLOAD")
    for canonical in v4_canonical_requests(
        request.method, request.raw_path, request.query, request.headers, signed_headers, payload
    ):
        if hmac.compare_digest(v4_sign(key, amz_date, scope, canonical), signature):
            return str(access_key)
    raise _signature_mismatch(access_key)
