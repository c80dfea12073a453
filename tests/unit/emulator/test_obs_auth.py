"""Signature checks of the fake, against an independent signer (botocore's)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from urllib.parse import unquote, urlsplit

import pytest

from majob.emulator.obs.auth import SignedRequest, verify
from majob.emulator.obs.models import ObsServiceError

# The AWS CLI (dev extra) vendors botocore as awscli.botocore since 1.44; older ones depend on it.
try:
    from awscli.botocore.auth import HmacV1Auth, S3SigV4Auth
    from awscli.botocore.awsrequest import AWSRequest
    from awscli.botocore.credentials import Credentials
except ImportError:  # pragma: no cover - depends on the awscli version
    from botocore.auth import HmacV1Auth, S3SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

KEYS = {"AKFAKE": "secret-one"}
URL = "http://127.0.0.1:9000/bkt/a%20b/%C3%BC%2Bc.txt?partNumber=2&uploadId=U%2F1"


def signed(kind: str, secret: str = "secret-one", access_key: str = "AKFAKE") -> SignedRequest:
    request = AWSRequest(method="PUT", url=URL, data=b"body", headers={"x-amz-meta-run": "42"})
    request.context["timestamp"] = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    creds = Credentials(access_key, secret)
    if kind == "v4":
        request.headers["X-Amz-Content-SHA256"] = "UNSIGNED-PAYLOAD"
        S3SigV4Auth(creds, "s3", "cn-north-4").add_auth(request)
    else:
        HmacV1Auth(creds).add_auth(request)
    prepared = request.prepare()
    parts = urlsplit(prepared.url)
    query = [
        (unquote(name), unquote(value))
        for name, _, value in (item.partition("=") for item in parts.query.split("&"))
    ]
    headers = {name.lower(): str(value) for name, value in prepared.headers.items()}
    headers["host"] = parts.netloc  # what the HTTP layer adds on the wire
    return SignedRequest("PUT", parts.path, query, headers)


@pytest.mark.parametrize("kind", ["v4", "v2"])
def test_right_key_passes(kind: str) -> None:
    assert verify(signed(kind), KEYS) == "AKFAKE"


@pytest.mark.parametrize("kind", ["v4", "v2"])
def test_wrong_secret_key_does_not_match(kind: str) -> None:
    with pytest.raises(ObsServiceError) as caught:
        verify(signed(kind, secret="secret-two"), KEYS)
    assert (caught.value.status, caught.value.code) == (403, "SignatureDoesNotMatch")
    assert "secret" not in caught.value.message


@pytest.mark.parametrize("kind", ["v4", "v2"])
def test_unknown_access_key(kind: str) -> None:
    with pytest.raises(ObsServiceError) as caught:
        verify(signed(kind, access_key="NOBODY"), KEYS)
    assert caught.value.code == "InvalidAccessKeyId"


@pytest.mark.parametrize("kind", ["v4", "v2"])
def test_tampered_request_does_not_match(kind: str) -> None:
    request = signed(kind)
    tampered = SignedRequest(
        request.method, request.raw_path.replace("c.txt", "d.txt"), request.query, request.headers
    )
    with pytest.raises(ObsServiceError, match="SignatureDoesNotMatch"):
        verify(tampered, KEYS)


def test_old_request_is_too_skewed() -> None:
    request = signed("v2")
    old = format_datetime(datetime.now(timezone.utc) - timedelta(hours=1), usegmt=True)
    headers = {**request.headers, "date": old}
    with pytest.raises(ObsServiceError) as caught:
        verify(SignedRequest("PUT", request.raw_path, request.query, headers), KEYS)
    assert caught.value.code == "RequestTimeTooSkewed"


def test_anonymous_and_malformed_requests() -> None:
    assert verify(SignedRequest("GET", "/bkt", [], {}), KEYS) is None
    with pytest.raises(ObsServiceError, match="Query-string authentication"):
        verify(SignedRequest("GET", "/bkt/k", [("Signature", "x")], {}), KEYS)
    with pytest.raises(ObsServiceError) as caught:
        verify(SignedRequest("GET", "/bkt", [], {"authorization": "Bearer token"}), KEYS)
    assert caught.value.status == 400
    bad_v4 = {"authorization": "AWS4-HMAC-SHA256 Credential=AKFAKE", "x-amz-date": "x"}
    with pytest.raises(ObsServiceError, match="malformed"):
        verify(SignedRequest("GET", "/bkt", [], bad_v4), KEYS)
