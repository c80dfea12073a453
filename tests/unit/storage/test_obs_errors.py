"""``storage_error``: every SDK failure, returned or raised, maps to one ``StorageError``."""

from __future__ import annotations

import http.client
import socket

import pytest
from obs.model import GetResult

from majob.errors import (
    StorageAuthError,
    StorageError,
    StorageIntegrityError,
    StorageNotFound,
    StorageUnreachable,
)
from majob.storage.obs_answers import epoch, metadata_from_headers
from majob.storage.obs_failures import storage_error
from majob.storage.retry import is_transient

SECRET = "very-secret-key-123"


def result(status: int, code: str | None, message: str = "msg") -> GetResult:
    return GetResult(code=code, message=message, status=status, reason="R", requestId="REQ1")


@pytest.mark.parametrize(
    ("failure", "kind", "retry"),
    [
        (socket.gaierror(-2, "Name or service not known"), StorageUnreachable, True),
        (TimeoutError("timed out"), StorageUnreachable, True),
        (ConnectionRefusedError(111, "Connection refused"), StorageUnreachable, True),
        (ConnectionResetError(104, "Connection reset by peer"), StorageUnreachable, True),
        (BrokenPipeError(32, "Broken pipe"), StorageUnreachable, True),
        (http.client.RemoteDisconnected("closed"), StorageUnreachable, True),
        (http.client.IncompleteRead(b"", 10), StorageUnreachable, True),
        (OSError(5, "I/O error"), StorageUnreachable, True),
        (Exception("some parts are failed when upload"), StorageError, False),
        (ValueError("bad argument"), StorageError, False),
    ],
)
def test_raised_failures(failure: BaseException, kind: type[StorageError], retry: bool) -> None:
    error = storage_error(failure, action="upload file", bucket="bkt", key="a/b")
    assert type(error) is kind
    assert (error.bucket, error.key) == ("bkt", "a/b")
    assert "obs://bkt/a/b" in str(error) and str(error).startswith("upload file")
    assert is_transient(error) is retry


# The cases are the OBS documentation's, written out here (not taken from majob's own tables):
# "OBS Server-Side Error Codes" of the OBS SDK guides (support.huaweicloud.com, e.g.
# sdk-php-devg-obs/obs_28_1601.html) and "Error Codes" of the OBS API reference
# (docs.otc.t-systems.com/object-storage-service/s3api/error_responses/error_codes.html): each
# error code with its HTTP status. What majob makes of each is the test's expectation.
@pytest.mark.parametrize(
    ("status", "code", "kind", "retry"),
    [
        # 403 Forbidden: a key, a signature or an account that OBS refuses
        (403, "AccessDenied", StorageAuthError, False),
        (403, "AccessForbidden", StorageAuthError, False),
        (403, "AccountProblem", StorageAuthError, False),
        (403, "AllAccessDisabled", StorageAuthError, False),
        (403, "DeregisterUserId", StorageAuthError, False),
        (403, "FrozenUserId", StorageAuthError, False),
        (403, "InvalidAccessKeyId", StorageAuthError, False),
        (403, "RequestTimeTooSkewed", StorageAuthError, False),
        (403, "SignatureDoesNotMatch", StorageAuthError, False),
        (403, None, StorageAuthError, False),  # a HEAD answer has no body, so no code
        # 404 Not Found
        (404, "NoSuchBucket", StorageNotFound, False),
        (404, "NoSuchKey", StorageNotFound, False),
        (404, "NoSuchUpload", StorageNotFound, False),
        (404, None, StorageNotFound, False),
        # 400 Bad Request: the body is not what was announced
        (400, "BadDigest", StorageIntegrityError, False),
        (400, "InvalidDigest", StorageIntegrityError, False),
        # 400 and 409: the request itself is wrong; sending it again changes nothing
        (400, "BadRequest", StorageError, False),
        (400, "EntityTooSmall", StorageError, False),
        (400, "EntityTooLarge", StorageError, False),
        (409, "BucketAlreadyExists", StorageError, False),
        (409, "BucketNotEmpty", StorageError, False),
        # a bad moment of the server: worth another try
        (400, "RequestTimeout", StorageError, True),
        (500, "InternalError", StorageError, True),
        (503, "ServiceUnavailable", StorageError, True),
        (503, "SlowDown", StorageError, True),
        (502, None, StorageError, True),
    ],
)
def test_returned_failures(
    status: int, code: str | None, kind: type[StorageError], retry: bool
) -> None:
    error = storage_error(result(status, code), action="head object", bucket="bkt", key="k")
    assert type(error) is kind
    assert (error.status, error.code, error.request_id) == (status, code, "REQ1")
    assert "request_id=REQ1" in str(error)
    assert is_transient(error) is retry


def test_auth_errors_carry_a_hint() -> None:
    error = storage_error(result(403, "SignatureDoesNotMatch"), action="list objects", bucket="bkt")
    assert error.hint and "HUAWEICLOUD_SDK_SK" in error.hint


def test_secrets_are_masked_in_every_branch() -> None:
    raised = storage_error(
        Exception(f"signing with {SECRET} failed"), action="x", secrets=(SECRET, "")
    )
    returned = storage_error(
        result(403, "SignatureDoesNotMatch", f"StringToSign was made with {SECRET}"),
        action="x",
        secrets=(SECRET,),
    )
    network = storage_error(OSError(f"proxy said {SECRET}"), action="x", secrets=(SECRET,))
    for error in (raised, returned, network):
        text = "\n".join(error.lines())
        assert SECRET not in text and "***" in text


def test_an_exception_without_text_names_its_type() -> None:
    assert "ConnectionResetError" in str(storage_error(ConnectionResetError(), action="get"))


def test_non_storage_errors_are_not_retried() -> None:
    assert not is_transient(ValueError("x"))


def test_metadata_is_what_is_left_of_the_headers() -> None:
    header = [
        ("request-id", "R"),
        ("id-2", "X"),
        ("etag", '"abc"'),
        ("content-length", "3"),
        ("last-modified", "Wed, 02 Dec 2026 13:46:16 GMT"),
        ("storage-class", "STANDARD"),
        ("Majob-MD5", "0123"),
        ("run-id", "42"),
    ]
    assert metadata_from_headers(header) == {"majob-md5": "0123", "run-id": "42"}
    assert metadata_from_headers(None) == {}


def test_listing_dates_are_read_as_utc() -> None:
    assert epoch("2026/12/02 14:45:58") == 1796222758.0
    assert epoch("2026-12-02T14:45:58.000Z") == 1796222758.0
    assert epoch("Wed, 02 Dec 2026 14:45:58 GMT") == 1796222758.0
    assert epoch("2026/13/45 99:99:99") == 0.0 and epoch("") == 0.0
