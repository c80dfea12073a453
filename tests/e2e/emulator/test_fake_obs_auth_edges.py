"""Authentication edges outside clients found in the fake OBS (issue 37): a V2 presigned PUT
sent with plain urllib, a V4 signature scoped to another region, and the anonymous
``?apiversion`` probe of a bucket that does not exist."""

from __future__ import annotations

import email.utils
import http.client
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, FakeObsServer, fake_obs

from .test_fake_obs_http import error_code, xml_texts
from .test_fake_obs_tags_parts_versions import boto3_client

KEY = "up/a b+ü.txt"


@pytest.fixture
def server() -> Iterator[FakeObsServer]:
    with fake_obs(buckets=("bkt",)) as running:  # the documented keys: signatures checked
        yield running


def urlopen(request: urllib.request.Request) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


# -- V2 presigned PUT with plain urllib --------------------------------------------------------


def test_urllib_put_of_a_v2_url_fails_only_for_the_content_type_it_adds(
    server: FakeObsServer,
) -> None:
    """urllib gives a body ``Content-Type: application/x-www-form-urlencoded``; the V2 string
    to sign has the request's Content-Type line, and boto3 signed an empty one. S3 and OBS
    refuse that (OBS's FAQ: a signed Content-Type must be the one sent), and the answer shows
    the StringToSign the service computed, so the cause can be seen."""
    client = boto3_client(server, signature="s3")
    url = client.generate_presigned_url(
        "put_object", Params={"Bucket": "bkt", "Key": KEY}, ExpiresIn=300
    )
    status, body = urlopen(urllib.request.Request(url, data=b"hello", method="PUT"))
    assert (status, error_code(body)) == (403, "SignatureDoesNotMatch")
    [to_sign] = xml_texts(body, "StringToSign")
    assert to_sign.split("\n")[:3] == ["PUT", "", "application/x-www-form-urlencoded"]
    assert DEFAULT_SECRET_KEY not in body.decode()
    assert not server.backend.buckets["bkt"].objects

    # The same URL with the Content-Type it was signed with (none) is taken.
    empty = urllib.request.Request(url, data=b"hello", method="PUT", headers={"Content-Type": ""})
    assert urlopen(empty)[0] == 200
    # A URL signed with a ContentType: boto3 also puts content-type= in its query, which
    # the fake ignores as S3 does (it answered 501); the header sent is what is signed.
    typed = client.generate_presigned_url(
        "put_object", Params={"Bucket": "bkt", "Key": KEY, "ContentType": "text/plain"}
    )
    assert "content-type=text%2Fplain" in typed
    request = urllib.request.Request(
        typed, data=b"typed", method="PUT", headers={"Content-Type": "text/plain"}
    )
    assert urlopen(request)[0] == 200
    stored = server.backend.get_object("bkt", KEY)
    assert (stored.content_type, stored.size) == ("text/plain", 5)
    client.close()


def test_a_v2_header_signature_mismatch_shows_the_string_to_sign(server: FakeObsServer) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    date = email.utils.formatdate(time.time(), usegmt=True)
    connection.request(
        "GET", "/bkt", headers={"Date": date, "Authorization": f"AWS {DEFAULT_ACCESS_KEY}:AAAA"}
    )
    answer = connection.getresponse()
    body = answer.read()
    connection.close()
    assert (answer.status, error_code(body)) == (403, "SignatureDoesNotMatch")
    assert xml_texts(body, "StringToSign") == [f"GET\n\n\n{date}\n/bkt"]
    assert xml_texts(body, "SignatureProvided") == ["AAAA"]


# -- V4 scoped to another region ---------------------------------------------------------------


def test_v4_in_another_region_is_refused_and_boto3_follows_the_named_region(
    server: FakeObsServer,
) -> None:
    client = boto3_client(server, region="us-east-1")
    # botocore reads <Region> from the 400 and signs again for it, as it does against S3.
    client.put_object(Bucket="bkt", Key="r.txt", Body=b"r")
    first, second = [e for e in server.log.entries() if e.path == "/bkt/r.txt"]
    assert (first.status, first.error) == (400, "AuthorizationHeaderMalformed")
    assert second.status == 200

    url = client.generate_presigned_url("get_object", Params={"Bucket": "bkt", "Key": "r.txt"})
    status, body = urlopen(urllib.request.Request(url))
    assert (status, error_code(body)) == (400, "AuthorizationQueryParametersError")
    assert xml_texts(body, "Region") == ["cn-north-4"]
    assert (
        "the region 'us-east-1' is wrong; expecting 'cn-north-4'" in xml_texts(body, "Message")[0]
    )
    client.close()


def test_sdk_v4_with_the_wrong_region_gets_a_clear_400(server: FakeObsServer) -> None:
    from obs import ObsClient

    sdk = ObsClient(
        access_key_id=DEFAULT_ACCESS_KEY,
        secret_access_key=DEFAULT_SECRET_KEY,
        server=server.endpoint,
        signature="v4",
        region="cn-east-3",
        max_retry_count=0,
    )
    answer: Any = sdk.putContent("bkt", "no.txt", "x")
    assert (answer.status, answer.errorCode) == (400, "AuthorizationHeaderMalformed")
    assert "expecting 'cn-north-4'" in answer.errorMessage
    assert not server.backend.buckets["bkt"].objects
    sdk.close()
    right = ObsClient(
        access_key_id=DEFAULT_ACCESS_KEY,
        secret_access_key=DEFAULT_SECRET_KEY,
        server=server.endpoint,
        signature="v4",
        region="cn-north-4",
        max_retry_count=0,
    )
    assert right.putContent("bkt", "yes.txt", "x").status == 200
    right.close()


def test_a_fake_in_another_region_expects_that_region() -> None:
    with fake_obs(buckets=("bkt",), region="ap-southeast-1") as other:
        client = boto3_client(other, region="ap-southeast-1")
        client.put_object(Bucket="bkt", Key="k", Body=b"k")
        assert {e.status for e in other.log.entries()} == {200}
        client.close()


# -- the apiversion probe ----------------------------------------------------------------------


def test_the_apiversion_probe_answers_only_for_a_bucket_that_exists(server: FakeObsServer) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    for bucket, status in (("bkt", 200), ("no-such-bucket", 404)):
        connection.request("HEAD", f"/{bucket}?apiversion")
        answer = connection.getresponse()
        answer.read()
        assert answer.status == status
        assert (answer.getheader("x-obs-api") == "3.0") == (status == 200)
    connection.request("GET", "/no-such-bucket?apiversion")
    answer = connection.getresponse()
    assert (answer.status, error_code(answer.read())) == (404, "NoSuchBucket")
    connection.close()
