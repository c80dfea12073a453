"""Object tagging, a multipart object's parts (``?partNumber``) and the versions of an
unversioned bucket, driven by the clients that found them answering 501 (issue 37): boto3, the
AWS CLI and esdk-obs-python, with signatures on, plus raw HTTP where a client hides the answer.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, FakeObsServer, fake_obs

from .test_fake_obs_http import call, error_code, xml_texts

PART = 5 * 1024 * 1024  # boto3's and the AWS CLI's smallest part


@pytest.fixture
def server() -> Iterator[FakeObsServer]:
    with fake_obs(buckets=("bkt",)) as running:  # the documented keys: signatures checked
        yield running


@pytest.fixture
def open_fake() -> Iterator[FakeObsServer]:
    with fake_obs(credentials={}, buckets=("bkt",)) as running:
        yield running


def boto3_client(server: FakeObsServer, signature: str = "s3v4", region: str = "cn-north-4") -> Any:
    import boto3
    from botocore.config import Config

    return boto3.session.Session().client(
        "s3",
        endpoint_url=server.endpoint,
        region_name=region,
        aws_access_key_id=DEFAULT_ACCESS_KEY,
        aws_secret_access_key=DEFAULT_SECRET_KEY,
        config=Config(
            signature_version=signature,
            s3={"addressing_style": "path"},
            retries={"max_attempts": 1},
        ),
    )


def sdk_client(server: FakeObsServer) -> Any:
    from obs import ObsClient

    return ObsClient(
        access_key_id=DEFAULT_ACCESS_KEY,
        secret_access_key=DEFAULT_SECRET_KEY,
        server=server.endpoint,
        signature="v2",
        path_style=True,
        max_retry_count=0,
    )


def aws(server: FakeObsServer, tmp_path: Path, *args: str) -> Any:
    config = tmp_path / "aws-config"
    config.write_text(
        "[default]\nregion = cn-north-4\ns3 =\n"
        f"  multipart_threshold = {PART}\n  multipart_chunksize = {PART}\n",
        encoding="utf-8",
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        "AWS_ACCESS_KEY_ID": DEFAULT_ACCESS_KEY,
        "AWS_SECRET_ACCESS_KEY": DEFAULT_SECRET_KEY,
        "AWS_CONFIG_FILE": str(config),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    command = [sys.executable, "-m", "awscli", "--endpoint-url", server.endpoint, *args]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def md5_header(body: bytes) -> dict[str, str]:
    return {"Content-MD5": base64.b64encode(hashlib.md5(body).digest()).decode()}


def tagging(*pairs: tuple[str, str]) -> bytes:
    tags = "".join(f"<Tag><Key>{k}</Key><Value>{v}</Value></Tag>" for k, v in pairs)
    return f"<Tagging><TagSet>{tags}</TagSet></Tagging>".encode()


# -- tagging -----------------------------------------------------------------------------------


def test_boto3_tags_an_object_reads_and_deletes_them(server: FakeObsServer) -> None:
    client = boto3_client(server)
    put = client.put_object(Bucket="bkt", Key="t/one.txt", Body=b"x", Tagging="team=ml&run=")
    assert client.get_object_tagging(Bucket="bkt", Key="t/one.txt")["TagSet"] == [
        {"Key": "team", "Value": "ml"},
        {"Key": "run", "Value": ""},
    ]
    ten = [{"Key": f"k{i}", "Value": f"v{i}"} for i in range(10)]
    client.put_object_tagging(Bucket="bkt", Key="t/one.txt", Tagging={"TagSet": ten})
    assert client.get_object_tagging(Bucket="bkt", Key="t/one.txt")["TagSet"] == ten
    got = client.get_object(Bucket="bkt", Key="t/one.txt")
    assert got["TagCount"] == 10
    # Tagging does not rewrite the object.
    assert got["ETag"] == put["ETag"]
    client.delete_object_tagging(Bucket="bkt", Key="t/one.txt")
    assert client.get_object_tagging(Bucket="bkt", Key="t/one.txt")["TagSet"] == []
    assert "TagCount" not in client.get_object(Bucket="bkt", Key="t/one.txt")
    client.close()


@pytest.mark.parametrize(
    ("tags", "reason"),
    [
        ([(f"k{i}", "v") for i in range(11)], "greater than 10"),
        ([("k" * 129, "v")], "TagKey"),
        ([("a*b", "v")], "holds '*'"),
        ([("k", "v" * 256)], "too long"),
        ([("a/b", "v")], "holds '/'"),
        ([("k", "x=y")], "holds '='"),
        ([("same", "1"), ("same", "2")], "same key"),
    ],
)
def test_boto3_bad_tag_sets_are_refused_whole(
    server: FakeObsServer, tags: list[tuple[str, str]], reason: str
) -> None:
    from botocore.exceptions import ClientError

    client = boto3_client(server)
    client.put_object(Bucket="bkt", Key="t.txt", Body=b"x", Tagging="keep=me")
    tag_set = [{"Key": k, "Value": v} for k, v in tags]
    with pytest.raises(ClientError, match="InvalidTag") as caught:
        client.put_object_tagging(Bucket="bkt", Key="t.txt", Tagging={"TagSet": tag_set})
    assert reason in caught.value.response["Error"]["Message"]
    assert server.backend.get_object("bkt", "t.txt").tags == {"keep": "me"}
    client.close()


def test_a_put_with_a_bad_tagging_header_stores_nothing(server: FakeObsServer) -> None:
    from botocore.exceptions import ClientError

    client = boto3_client(server)
    with pytest.raises(ClientError, match="InvalidTag"):
        client.put_object(Bucket="bkt", Key="no.txt", Body=b"x", Tagging="a|b=1")
    with pytest.raises(ClientError, match="InvalidArgument"):
        client.put_object(Bucket="bkt", Key="no.txt", Body=b"x", Tagging="a=1&a=2")
    assert not server.backend.buckets["bkt"].objects
    client.close()


def test_tags_follow_copy_and_overwrite_rules(server: FakeObsServer) -> None:
    client = boto3_client(server)
    client.put_object(Bucket="bkt", Key="src", Body=b"x", Tagging="a=1")
    client.copy_object(Bucket="bkt", Key="copied", CopySource="bkt/src")
    assert client.get_object_tagging(Bucket="bkt", Key="copied")["TagSet"] == [
        {"Key": "a", "Value": "1"}
    ]
    client.copy_object(
        Bucket="bkt", Key="replaced", CopySource="bkt/src", TaggingDirective="REPLACE",
        Tagging="b=2",
    )  # fmt: skip
    assert client.get_object_tagging(Bucket="bkt", Key="replaced")["TagSet"] == [
        {"Key": "b", "Value": "2"}
    ]
    client.put_object(Bucket="bkt", Key="src", Body=b"new")  # an overwrite has its own tags
    assert client.get_object_tagging(Bucket="bkt", Key="src")["TagSet"] == []
    client.close()


def test_sdk_and_awscli_tag_and_read_tags(server: FakeObsServer, tmp_path: Path) -> None:
    sdk = sdk_client(server)
    assert sdk.putContent("bkt", "s.txt", "x").status == 200
    assert sdk.setObjectTagging("bkt", "s.txt", {"owner": "lead", "empty": ""}).status == 200
    got = sdk.getObjectTagging("bkt", "s.txt")
    assert got.status == 200
    assert {(t.key, t.value) for t in got.body.tags} == {("owner", "lead"), ("empty", "")}
    listed = aws(
        server, tmp_path, "s3api", "get-object-tagging", "--bucket", "bkt", "--key", "s.txt"
    )
    assert {(t["Key"], t["Value"]) for t in listed["TagSet"]} == {("owner", "lead"), ("empty", "")}
    tag_set = json.dumps({"TagSet": [{"Key": "cli", "Value": "yes"}]})
    aws(server, tmp_path, "s3api", "put-object-tagging", "--bucket", "bkt", "--key", "s.txt",
        "--tagging", tag_set)  # fmt: skip
    assert server.backend.get_object("bkt", "s.txt").tags == {"cli": "yes"}
    assert sdk.deleteObjectTagging("bkt", "s.txt").status == 204
    assert server.backend.get_object("bkt", "s.txt").tags == {}
    sdk.close()


def test_raw_tagging_answers(open_fake: FakeObsServer) -> None:
    body = tagging(("a", "1"))
    status, _, answer = call(open_fake, "PUT", "/bkt/none?tagging", body, md5_header(body))
    assert (status, error_code(answer)) == (404, "NoSuchKey")
    assert call(open_fake, "PUT", "/bkt/k", b"x")[0] == 200
    status, _, answer = call(open_fake, "PUT", "/bkt/k?tagging", body)  # no Content-MD5
    assert (status, error_code(answer)) == (400, "InvalidRequest")
    status, _, answer = call(open_fake, "PUT", "/bkt/k?tagging", b"<Tags/>", md5_header(b"<Tags/>"))
    assert (status, error_code(answer)) == (400, "MalformedXML")
    empty_key = tagging(("", "v"))  # botocore refuses to send it: the fake must refuse it too
    status, _, answer = call(open_fake, "PUT", "/bkt/k?tagging", empty_key, md5_header(empty_key))
    assert (status, error_code(answer)) == (400, "InvalidTag")
    assert call(open_fake, "PUT", "/bkt/k?tagging", body, md5_header(body))[0] == 200
    status, _, answer = call(open_fake, "GET", "/bkt/k?tagging")
    assert status == 200 and xml_texts(answer, "Key") == ["a"]
    status, _, answer = call(open_fake, "GET", "/bkt/k?tagging&versionId=v1")
    assert (status, error_code(answer)) == (400, "InvalidArgument")
    assert call(open_fake, "GET", "/bkt/k?tagging&versionId=null")[0] == 200


def test_tags_survive_a_restart(tmp_path: Path) -> None:
    with fake_obs(credentials={}, buckets=("bkt",), data_dir=tmp_path) as first:
        body = tagging(("kept", "yes"))
        assert call(first, "PUT", "/bkt/k", b"x", {"x-amz-tagging": "at=put"})[0] == 200
        assert call(first, "PUT", "/bkt/j", b"y", {"x-amz-tagging": "at=put"})[0] == 200
        assert call(first, "PUT", "/bkt/j?tagging", body, md5_header(body))[0] == 200
        assert call(first, "DELETE", "/bkt/k?tagging")[0] == 204
    with fake_obs(credentials={}, data_dir=tmp_path) as second:
        assert second.backend.get_object("bkt", "j").tags == {"kept": "yes"}
        assert second.backend.get_object("bkt", "k").tags == {}


# -- a multipart object's parts ----------------------------------------------------------------


def test_boto3_reads_a_multipart_object_part_by_part(server: FakeObsServer) -> None:
    from boto3.s3.transfer import TransferConfig
    from botocore.exceptions import ClientError

    data = os.urandom(2 * PART + 1000)
    client = boto3_client(server)
    config = TransferConfig(multipart_threshold=PART, multipart_chunksize=PART)
    client.upload_fileobj(io.BytesIO(data), "bkt", "mp.bin", Config=config)
    bounds = [(0, PART), (PART, 2 * PART), (2 * PART, len(data))]
    for number, (start, end) in enumerate(bounds, start=1):
        got = client.get_object(Bucket="bkt", Key="mp.bin", PartNumber=number)
        assert got["Body"].read() == data[start:end]
        assert got["PartsCount"] == 3
        assert got["ContentRange"] == f"bytes {start}-{end - 1}/{len(data)}"
        head = client.head_object(Bucket="bkt", Key="mp.bin", PartNumber=number)
        assert (head["ContentLength"], head["PartsCount"]) == (end - start, 3)
    with pytest.raises(ClientError, match="InvalidPartNumber"):
        client.get_object(Bucket="bkt", Key="mp.bin", PartNumber=4)
    client.put_object(Bucket="bkt", Key="one.bin", Body=b"single")
    got = client.get_object(Bucket="bkt", Key="one.bin", PartNumber=1)
    assert got["Body"].read() == b"single" and "PartsCount" not in got
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
    with pytest.raises(ClientError, match="InvalidPartNumber"):
        client.get_object(Bucket="bkt", Key="one.bin", PartNumber=2)
    client.close()


def test_awscli_heads_a_part(server: FakeObsServer, tmp_path: Path) -> None:
    source = tmp_path / "big.bin"
    source.write_bytes(os.urandom(PART + 4096))
    aws(server, tmp_path, "s3", "cp", "--only-show-errors", str(source), "s3://bkt/big.bin")
    head = aws(server, tmp_path, "s3api", "head-object", "--bucket", "bkt", "--key", "big.bin",
               "--part-number", "2")  # fmt: skip
    assert (head["PartsCount"], head["ContentLength"]) == (2, 4096)


def test_raw_part_number_refusals(open_fake: FakeObsServer) -> None:
    assert call(open_fake, "PUT", "/bkt/k", b"0123456789")[0] == 200
    for bad in ("0", "10001", "x"):
        status, _, body = call(open_fake, "GET", f"/bkt/k?partNumber={bad}")
        assert (status, error_code(body)) == (400, "InvalidArgument")
    status, _, body = call(open_fake, "GET", "/bkt/k?partNumber=1", headers={"Range": "bytes=0-1"})
    assert (status, error_code(body)) == (400, "InvalidRequest")
    status, headers, body = call(open_fake, "GET", "/bkt/k?partNumber=1")
    assert (status, headers["content-range"], body) == (206, "bytes 0-9/10", b"0123456789")
    assert "x-amz-mp-parts-count" not in headers


# -- versions of an unversioned bucket ---------------------------------------------------------


def test_boto3_sees_an_unversioned_bucket(server: FakeObsServer) -> None:
    client = boto3_client(server)
    versioning = client.get_bucket_versioning(Bucket="bkt")
    assert "Status" not in versioning and "MFADelete" not in versioning
    keys = ["a/1", "a/2", "a/b/3", "c", "d"]
    for key in keys:
        client.put_object(Bucket="bkt", Key=key, Body=key.encode())
    pages = client.get_paginator("list_object_versions").paginate(
        Bucket="bkt", PaginationConfig={"PageSize": 2}
    )
    versions = [v for page in pages for v in page.get("Versions", [])]
    assert [v["Key"] for v in versions] == keys
    assert all(v["VersionId"] == "null" and v["IsLatest"] for v in versions)
    assert versions[0]["ETag"] == f'"{hashlib.md5(b"a/1").hexdigest()}"'
    rolled = client.list_object_versions(Bucket="bkt", Prefix="a/", Delimiter="/")
    assert [v["Key"] for v in rolled["Versions"]] == ["a/1", "a/2"]
    assert [p["Prefix"] for p in rolled["CommonPrefixes"]] == ["a/b/"]
    after = client.list_object_versions(Bucket="bkt", KeyMarker="a/b/3", MaxKeys=1)
    assert [v["Key"] for v in after["Versions"]] == ["c"]
    assert (after["IsTruncated"], after["NextKeyMarker"]) == (True, "c")
    assert after["NextVersionIdMarker"] == "null"
    got = client.get_object(Bucket="bkt", Key="c", VersionId="null")
    assert got["Body"].read() == b"c"
    client.close()


def test_sdk_and_awscli_list_versions(server: FakeObsServer, tmp_path: Path) -> None:
    from obs import Versions

    sdk = sdk_client(server)
    for key in ("v/1", "v/2", "w"):
        assert sdk.putContent("bkt", key, key).status == 200
    assert sdk.getBucketVersioning("bkt").status == 200
    assert sdk.getBucketVersioning("bkt").body is None  # no Status: never enabled
    listed = sdk.listVersions("bkt", Versions(prefix="v/", max_keys=1))
    assert listed.status == 200
    assert [(v.key, v.versionId, v.isLatest) for v in listed.body.versions] == [
        ("v/1", "null", True)
    ]
    assert listed.body.head.isTruncated and listed.body.head.nextKeyMarker == "v/1"
    sdk.close()
    cli = aws(server, tmp_path, "s3api", "list-object-versions", "--bucket", "bkt")
    assert [(v["Key"], v["VersionId"]) for v in cli["Versions"]] == [
        ("v/1", "null"), ("v/2", "null"), ("w", "null"),
    ]  # fmt: skip
    status = aws(server, tmp_path, "s3api", "get-bucket-versioning", "--bucket", "bkt")
    assert status is None or "Status" not in status


def test_raw_version_refusals(open_fake: FakeObsServer) -> None:
    status, _, body = call(open_fake, "GET", "/bkt?versions&version-id-marker=null")
    assert (status, error_code(body)) == (400, "InvalidArgument")
    status, _, body = call(open_fake, "GET", "/none?versions")
    assert (status, error_code(body)) == (404, "NoSuchBucket")
    status, _, body = call(open_fake, "GET", "/none?versioning")
    assert (status, error_code(body)) == (404, "NoSuchBucket")
    status, _, body = call(open_fake, "GET", "/bkt?versioning")
    assert status == 200 and xml_texts(body, "Status") == []
    assert call(open_fake, "PUT", "/bkt/k", b"x")[0] == 200
    status, _, body = call(open_fake, "GET", "/bkt/k?versionId=3HL4kqtJlcpXroDTDmJ")
    assert (status, error_code(body)) == (400, "InvalidArgument")


def test_boto3_multipart_upload_keeps_the_tags_it_was_started_with(server: FakeObsServer) -> None:
    from boto3.s3.transfer import TransferConfig

    client = boto3_client(server)
    config = TransferConfig(multipart_threshold=PART, multipart_chunksize=PART)
    client.upload_fileobj(
        io.BytesIO(os.urandom(PART + 10)), "bkt", "tagged.bin", Config=config,
        ExtraArgs={"Tagging": "stage=debug"},
    )  # fmt: skip
    assert server.backend.get_object("bkt", "tagged.bin").etag.endswith("-2")
    assert client.get_object_tagging(Bucket="bkt", Key="tagged.bin")["TagSet"] == [
        {"Key": "stage", "Value": "debug"}
    ]
    client.close()
