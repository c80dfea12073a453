"""The clients of the faithfulness suite: one adapter per real client, same five verbs.

Each adapter drives a real, unmodified client against the fake OBS: esdk-obs-python with the V2
and V4 signatures and with the OBS protocol (``client_mode='workflow'``), rclone (a Go S3
client, skipped with a reason where it is not installed), the AWS CLI (botocore), boto3 and
s3cmd, each of the last two with the V2 and the V4 signature.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, FakeObsServer

MULTIPART_CHUNK = 5 * 1024 * 1024  # rclone's and the AWS CLI's smallest part size


class Client(Protocol):
    name: str
    family: str  # the header family the fake should see: "amz" or "obs"
    multipart_size: int  # a file this big is uploaded in parts

    def put(self, bucket: str, key: str, path: Path, metadata: dict[str, str]) -> None: ...
    def get(self, bucket: str, key: str, dest: Path) -> None: ...
    def get_range(self, bucket: str, key: str, first: int, last: int) -> bytes: ...
    def list(self, bucket: str, prefix: str) -> list[str]: ...
    def delete(self, bucket: str, key: str) -> None: ...
    def metadata(self, bucket: str, key: str) -> dict[str, str]: ...


class ClientFailed(Exception):
    """A client reported failure; the message is what it printed."""


class SdkClient:
    """esdk-obs-python, used the way its documentation shows."""

    multipart_size = 1_000_000

    def __init__(self, endpoint: str, secret_key: str, mode: str) -> None:
        from obs import ObsClient

        self.name = f"sdk-{mode}"
        self.family = "obs" if mode == "obs" else "amz"
        options: dict[str, Any] = {"signature": mode}
        if mode == "obs":
            options["client_mode"] = "workflow"
        if mode == "v4":
            options["region"] = "cn-north-4"
        self.client = ObsClient(
            access_key_id=DEFAULT_ACCESS_KEY,
            secret_access_key=secret_key,
            server=endpoint,
            long_conn_mode=True,
            max_retry_count=0,
            **options,
        )

    def _check(self, result: Any) -> Any:
        if result.status >= 300:
            raise ClientFailed(f"{result.status} {result.errorCode}: {result.errorMessage}")
        return result

    def put(self, bucket: str, key: str, path: Path, metadata: dict[str, str]) -> None:
        if path.stat().st_size >= self.multipart_size:
            self._check(
                self.client.uploadFile(
                    bucket, key, str(path), partSize=256 * 1024, taskNum=2, metadata=metadata
                )
            )
        else:
            self._check(self.client.putFile(bucket, key, str(path), metadata=metadata))

    def get(self, bucket: str, key: str, dest: Path) -> None:
        self._check(self.client.getObject(bucket, key, downloadPath=str(dest)))

    def get_range(self, bucket: str, key: str, first: int, last: int) -> bytes:
        from obs import GetObjectHeader

        result = self._check(
            self.client.getObject(
                bucket,
                key,
                headers=GetObjectHeader(range=f"{first}-{last}"),
                loadStreamInMemory=True,
            )
        )
        return bytes(result.body.buffer)

    def list(self, bucket: str, prefix: str) -> list[str]:
        keys: list[str] = []
        marker = None
        while True:
            body = self._check(self.client.listObjects(bucket, prefix=prefix, marker=marker)).body
            keys += [item.key for item in body.contents]
            if not body.is_truncated:
                return keys
            marker = body.next_marker or keys[-1]

    def delete(self, bucket: str, key: str) -> None:
        self._check(self.client.deleteObject(bucket, key))

    def metadata(self, bucket: str, key: str) -> dict[str, str]:
        result = self._check(self.client.getObjectMetadata(bucket, key))
        return {name: value for name, value in result.header if name.startswith("majob-")}

    def close(self) -> None:
        self.client.close()


def _run(
    command: list[str], env: dict[str, str], **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, env=env, capture_output=True, text=True, timeout=120, check=False, **kwargs
    )
    if done.returncode != 0:
        raise ClientFailed(f"exit {done.returncode}: {done.stderr.strip()}")
    return done


def _clean_env() -> dict[str, str]:
    """The environment without anything that would point a client elsewhere."""
    return {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("AWS_", "RCLONE_", "HUAWEICLOUD_", "MAJOB_"))
    }


class RcloneClient:
    """rclone's S3 backend (provider Other, path style), configured from the environment."""

    name = "rclone"
    family = "amz"
    multipart_size = 2 * MULTIPART_CHUNK + 1000

    def __init__(self, endpoint: str, secret_key: str, tmp: Path) -> None:
        # AWS_CA_BUNDLE is left out on purpose: with it rclone fails (LoadCustomCABundleError).
        self.env = {
            **_clean_env(),
            "RCLONE_CONFIG": str(tmp / "rclone.conf"),
            "RCLONE_CONFIG_FAKE_TYPE": "s3",
            "RCLONE_CONFIG_FAKE_PROVIDER": "Other",
            "RCLONE_CONFIG_FAKE_ACCESS_KEY_ID": DEFAULT_ACCESS_KEY,
            "RCLONE_CONFIG_FAKE_SECRET_ACCESS_KEY": secret_key,
            "RCLONE_CONFIG_FAKE_ENDPOINT": endpoint,
            "RCLONE_CONFIG_FAKE_FORCE_PATH_STYLE": "true",
            # The fake (as OBS and S3) refuses a V4 scope naming another region; rclone's
            # default for provider Other is us-east-1.
            "RCLONE_CONFIG_FAKE_REGION": "cn-north-4",
            "RCLONE_CONFIG_FAKE_UPLOAD_CUTOFF": f"{MULTIPART_CHUNK}B",
            "RCLONE_CONFIG_FAKE_CHUNK_SIZE": f"{MULTIPART_CHUNK}B",
        }
        (tmp / "rclone.conf").write_text("", encoding="utf-8")
        self.rclone = shutil.which("rclone") or "rclone"

    def _rclone(self, *args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        return _run(
            [self.rclone, "--retries", "1", "--low-level-retries", "1", *args], self.env, **kwargs
        )

    def put(self, bucket: str, key: str, path: Path, metadata: dict[str, str]) -> None:
        sets = [
            arg for name, value in metadata.items() for arg in ("--metadata-set", f"{name}={value}")
        ]
        self._rclone("copyto", "-M", *sets, str(path), f"fake:{bucket}/{key}")

    def get(self, bucket: str, key: str, dest: Path) -> None:
        self._rclone("copyto", f"fake:{bucket}/{key}", str(dest))

    def get_range(self, bucket: str, key: str, first: int, last: int) -> bytes:
        done = subprocess.run(
            [self.rclone, "cat", "--offset", str(first), "--count", str(last - first + 1),
             f"fake:{bucket}/{key}"],
            env=self.env, capture_output=True, timeout=60, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise ClientFailed(done.stderr.decode(errors="replace"))
        return done.stdout

    def list(self, bucket: str, prefix: str) -> list[str]:
        done = self._rclone("lsf", "-R", "--files-only", f"fake:{bucket}/{prefix}")
        return sorted(prefix + line for line in done.stdout.splitlines() if line)

    def delete(self, bucket: str, key: str) -> None:
        self._rclone("deletefile", f"fake:{bucket}/{key}")

    def metadata(self, bucket: str, key: str) -> dict[str, str]:
        done = self._rclone("lsjson", "-M", f"fake:{bucket}/{key}")
        found: dict[str, str] = json.loads(done.stdout)[0].get("Metadata", {})
        return {name: value for name, value in found.items() if name.startswith("majob-")}

    def close(self) -> None:
        pass


class AwsCliClient:
    """The AWS CLI (``python -m awscli``, from the dev extra)."""

    name = "awscli"
    family = "amz"
    multipart_size = 2 * MULTIPART_CHUNK + 1000

    def __init__(self, endpoint: str, secret_key: str, tmp: Path) -> None:
        config = tmp / "aws-config"
        config.write_text(
            "[default]\nregion = cn-north-4\ns3 =\n"
            f"  multipart_threshold = {MULTIPART_CHUNK}\n  multipart_chunksize = {MULTIPART_CHUNK}\n",
            encoding="utf-8",
        )
        self.env = {
            **_clean_env(),
            "AWS_ACCESS_KEY_ID": DEFAULT_ACCESS_KEY,
            "AWS_SECRET_ACCESS_KEY": secret_key,
            "AWS_CONFIG_FILE": str(config),
            "AWS_SHARED_CREDENTIALS_FILE": str(tmp / "no-credentials"),
            "AWS_EC2_METADATA_DISABLED": "true",
        }
        self.endpoint = endpoint
        self.tmp = tmp

    def _aws(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "awscli", "--endpoint-url", self.endpoint]
        return _run([*command, "--output", "json", *args], self.env)

    def put(self, bucket: str, key: str, path: Path, metadata: dict[str, str]) -> None:
        meta = ",".join(f"{name}={value}" for name, value in metadata.items())
        extra = ["--metadata", meta] if meta else []
        self._aws("s3", "cp", "--only-show-errors", *extra, str(path), f"s3://{bucket}/{key}")

    def get(self, bucket: str, key: str, dest: Path) -> None:
        self._aws("s3", "cp", "--only-show-errors", f"s3://{bucket}/{key}", str(dest))

    def get_range(self, bucket: str, key: str, first: int, last: int) -> bytes:
        out = self.tmp / "range.bin"
        self._aws("s3api", "get-object", "--bucket", bucket, "--key", key, "--range",
                  f"bytes={first}-{last}", str(out))  # fmt: skip
        return out.read_bytes()

    def list(self, bucket: str, prefix: str) -> list[str]:
        done = self._aws("s3api", "list-objects-v2", "--bucket", bucket, "--prefix", prefix)
        return [item["Key"] for item in json.loads(done.stdout or "{}").get("Contents", [])]

    def delete(self, bucket: str, key: str) -> None:
        self._aws("s3", "rm", "--only-show-errors", f"s3://{bucket}/{key}")

    def metadata(self, bucket: str, key: str) -> dict[str, str]:
        done = self._aws("s3api", "head-object", "--bucket", bucket, "--key", key)
        found: dict[str, str] = json.loads(done.stdout)["Metadata"]
        return found

    def close(self) -> None:
        pass


class Boto3Client:
    """boto3 (from the dev extra) with the V2 (``s3``) or V4 (``s3v4``) signature, path style;
    current botocore sends a CRC32 checksum with every upload."""

    family = "amz"
    multipart_size = 2 * MULTIPART_CHUNK + 1000

    def __init__(self, endpoint: str, secret_key: str, signature: str) -> None:
        import boto3
        from boto3.s3.transfer import TransferConfig
        from botocore.config import Config

        self.name = f"boto3-{signature}"
        self.client = boto3.session.Session().client(
            "s3",
            endpoint_url=endpoint,
            region_name="cn-north-4",
            aws_access_key_id=DEFAULT_ACCESS_KEY,
            aws_secret_access_key=secret_key,
            config=Config(
                signature_version="s3" if signature == "v2" else "s3v4",
                s3={"addressing_style": "path"},
                retries={"max_attempts": 1},
            ),
        )
        self.transfer = TransferConfig(
            multipart_threshold=MULTIPART_CHUNK, multipart_chunksize=MULTIPART_CHUNK
        )

    def _call(self, action: Any, *args: Any, **kwargs: Any) -> Any:
        from boto3.exceptions import Boto3Error
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return action(*args, **kwargs)
        except (ClientError, BotoCoreError, Boto3Error) as error:
            raise ClientFailed(str(error)) from error

    def put(self, bucket: str, key: str, path: Path, metadata: dict[str, str]) -> None:
        extra = {"Metadata": metadata} if metadata else {}
        self._call(
            self.client.upload_file, str(path), bucket, key, ExtraArgs=extra, Config=self.transfer
        )

    def get(self, bucket: str, key: str, dest: Path) -> None:
        self._call(self.client.download_file, bucket, key, str(dest), Config=self.transfer)

    def get_range(self, bucket: str, key: str, first: int, last: int) -> bytes:
        answer = self._call(
            self.client.get_object, Bucket=bucket, Key=key, Range=f"bytes={first}-{last}"
        )
        data: bytes = answer["Body"].read()
        return data

    def list(self, bucket: str, prefix: str) -> list[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return [item["Key"] for page in pages for item in page.get("Contents", [])]

    def delete(self, bucket: str, key: str) -> None:
        self._call(self.client.delete_object, Bucket=bucket, Key=key)

    def metadata(self, bucket: str, key: str) -> dict[str, str]:
        found: dict[str, str] = self._call(self.client.head_object, Bucket=bucket, Key=key)[
            "Metadata"
        ]
        return found

    def close(self) -> None:
        self.client.close()


def _s3cmd() -> str | None:
    """s3cmd from the dev extra (next to this interpreter), else one on PATH."""
    beside = Path(sys.executable).parent / "s3cmd"
    return str(beside) if beside.exists() else shutil.which("s3cmd")


class S3cmdClient:
    """s3cmd (from the dev extra) with the V2 or V4 signature, path style."""

    family = "amz"
    multipart_size = 2 * MULTIPART_CHUNK + 1000

    def __init__(self, endpoint: str, secret_key: str, tmp: Path, signature: str) -> None:
        self.name = f"s3cmd-{signature}"
        host = endpoint.removeprefix("http://")
        self.config = tmp / f"s3cmd-{signature}.cfg"
        self.config.write_text(
            "[default]\n"
            f"access_key = {DEFAULT_ACCESS_KEY}\nsecret_key = {secret_key}\n"
            f"host_base = {host}\nhost_bucket = {host}\nuse_https = False\n"
            f"signature_v2 = {signature == 'v2'}\nbucket_location = cn-north-4\n"
            f"multipart_chunk_size_mb = {MULTIPART_CHUNK // 2**20}\n"
            "progress_meter = False\nmax_retries = 1\n",
            encoding="utf-8",
        )
        self.env = {**_clean_env(), "HOME": str(tmp)}
        self.s3cmd = _s3cmd() or "s3cmd"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return _run([self.s3cmd, "--config", str(self.config), *args], self.env)

    def put(self, bucket: str, key: str, path: Path, metadata: dict[str, str]) -> None:
        headers = [f"--add-header=x-amz-meta-{name}:{value}" for name, value in metadata.items()]
        self._run("put", "--no-preserve", *headers, str(path), f"s3://{bucket}/{key}")

    def get(self, bucket: str, key: str, dest: Path) -> None:
        self._run("get", "--force", f"s3://{bucket}/{key}", str(dest))

    def get_range(self, bucket: str, key: str, first: int, last: int) -> bytes:
        pytest.skip("s3cmd has no ranged GET")

    def list(self, bucket: str, prefix: str) -> list[str]:
        done = self._run("ls", "-r", f"s3://{bucket}/{prefix}")
        marker = f"s3://{bucket}/"
        return [line.split(marker, 1)[1] for line in done.stdout.splitlines() if marker in line]

    def delete(self, bucket: str, key: str) -> None:
        self._run("del", f"s3://{bucket}/{key}")

    def metadata(self, bucket: str, key: str) -> dict[str, str]:
        done = self._run("info", f"s3://{bucket}/{key}")
        found: dict[str, str] = {}
        for line in done.stdout.splitlines():
            name, _, value = line.strip().partition(":")
            if name.startswith("x-amz-meta-majob-"):
                found[name.removeprefix("x-amz-meta-")] = value.strip()
        return found

    def close(self) -> None:
        pass


CLIENTS = [
    "sdk-v2", "sdk-v4", "sdk-obs", "rclone", "awscli", "boto3-v2", "boto3-v4", "s3cmd-v2",
    "s3cmd-v4",
]  # fmt: skip


def make_client(name: str, endpoint: str, secret_key: str, tmp: Path) -> Any:
    if name.startswith("sdk-"):
        return SdkClient(endpoint, secret_key, name.removeprefix("sdk-"))
    if name == "rclone":
        if shutil.which("rclone") is None:
            pytest.skip("rclone is not installed (apt-get install rclone; .ci/run installs it)")
        return RcloneClient(endpoint, secret_key, tmp)
    if name.startswith("boto3-"):
        return Boto3Client(endpoint, secret_key, name.removeprefix("boto3-"))
    if name.startswith("s3cmd-"):
        if _s3cmd() is None:
            pytest.skip("s3cmd is not installed (pip install -e '.[dev]' installs it)")
        return S3cmdClient(endpoint, secret_key, tmp, name.removeprefix("s3cmd-"))
    return AwsCliClient(endpoint, secret_key, tmp)


@pytest.fixture(params=CLIENTS)
def client_name(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def client(client_name: str, fake_obs_server: FakeObsServer, tmp_path: Path) -> Iterator[Any]:
    made = make_client(client_name, fake_obs_server.endpoint, DEFAULT_SECRET_KEY, tmp_path)
    try:
        yield made
    finally:
        made.close()
