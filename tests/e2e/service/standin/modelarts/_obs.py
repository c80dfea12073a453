"""``session.obs``: the OBS helper of a session (sdkreference ``_0437`` documents ``copy``; the
rest is what public code calls [P]). OBS paths are written ``obs://bucket/key``; a path ending
in ``/`` is a directory."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


def _split(obs_path: str) -> tuple[str, str]:
    if not obs_path.startswith("obs://"):
        raise ValueError(f"expected an obs:// path, got {obs_path!r}")
    bucket, _, key = obs_path[len("obs://") :].partition("/")
    if not bucket:
        raise ValueError(f"{obs_path!r} names no bucket")
    return bucket, key


class ObsHelper:
    def __init__(self, client: Any) -> None:
        self.client = client

    def _ok(self, response: Any, what: str) -> Any:
        if response.status >= 300:
            raise OSError(f"{what}: OBS answered {response.status} {response.errorCode}")
        return response

    def upload_file(self, src_local_file: str, dst_obs_path: str) -> None:
        bucket, key = _split(dst_obs_path)
        if key.endswith("/") or not key:
            key += os.path.basename(src_local_file)
        self._ok(self.client.putFile(bucket, key, src_local_file), f"upload {src_local_file}")

    def download_file(self, src_obs_file: str, dst_local_file: str) -> None:
        bucket, key = _split(src_obs_file)
        target = Path(dst_local_file)
        if target.is_dir():
            target = target / key.rsplit("/", 1)[-1]
        target.parent.mkdir(parents=True, exist_ok=True)
        response = self.client.getObject(bucket, key, downloadPath=str(target))
        self._ok(response, f"download {src_obs_file}")

    def is_obs_path_exists(self, obs_path: str) -> bool:
        bucket, key = _split(obs_path)
        if key and not key.endswith("/"):
            return bool(self.client.getObjectMetadata(bucket, key).status < 300)
        listing = self.client.listObjects(bucket, prefix=key, max_keys=1)
        return bool(listing.status < 300 and listing.body.contents)

    def get_default_bucket(self) -> str:
        """The first bucket of the account [U: the real helper may create one]."""
        listing = self._ok(self.client.listBuckets(), "list buckets")
        buckets = listing.body.buckets or []
        if not buckets:
            raise OSError("the account has no OBS bucket")
        return str(buckets[0].name)

    def copy(self, src_path: str, dst_path: str, keep_last_dir: bool = True) -> None:
        """Local → OBS (upload) or OBS → local (download), a file or a directory; a copied
        directory keeps its own name under ``dst_path`` unless ``keep_last_dir`` is False."""
        if src_path.startswith("obs://"):
            self._download(src_path, dst_path, keep_last_dir)
        elif dst_path.startswith("obs://"):
            self._upload(Path(src_path), dst_path, keep_last_dir)
        else:
            raise ValueError("copy goes between a local path and an obs:// path")

    def _upload(self, source: Path, dst_path: str, keep_last_dir: bool) -> None:
        if source.is_file():
            self.upload_file(str(source), dst_path)
            return
        base = dst_path.rstrip("/") + "/" + (source.name + "/" if keep_last_dir else "")
        for file in sorted(p for p in source.rglob("*") if p.is_file()):
            self.upload_file(str(file), base + file.relative_to(source).as_posix())

    def _download(self, src_path: str, dst_path: str, keep_last_dir: bool) -> None:
        bucket, key = _split(src_path)
        if not key.endswith("/"):
            self.download_file(src_path, dst_path)
            return
        last = key.rstrip("/").rsplit("/", 1)[-1] if keep_last_dir else ""
        target = Path(dst_path) / last
        listing = self._ok(self.client.listObjects(bucket, prefix=key), f"list {src_path}")
        for item in listing.body.contents or []:
            if item.key.endswith("/"):
                continue
            self.download_file(f"obs://{bucket}/{item.key}", str(target / item.key[len(key) :]))
