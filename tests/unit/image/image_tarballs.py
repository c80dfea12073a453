"""Build small image tarballs (docker save and OCI layout) for the tests, with tarfile + gzip."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path


def layer(files: dict[str, bytes], compression: str = "none") -> bytes:
    """A layer tar holding ``files`` (a name ending in '/' is a directory), maybe compressed."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, content in files.items():
            info = tarfile.TarInfo(name.rstrip("/"))
            if name.endswith("/"):
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            else:
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    data = buffer.getvalue()
    if compression == "gzip":
        return gzip.compress(data, mtime=0)
    if compression == "zstd":
        import zstandard

        return zstandard.ZstdCompressor().compress(data)
    return data


def _add(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _config(history: list[str]) -> bytes:
    entries = [{"created_by": "/bin/sh -c #(nop)  ENV PYTHONUNBUFFERED=1", "empty_layer": True}]
    entries += [{"created_by": line} for line in history]
    return json.dumps({"architecture": "amd64", "os": "linux", "history": entries}).encode()


def docker_save(path: Path, layers: list[bytes], history: list[str], tag: str = "demo:1") -> Path:
    """What ``docker save`` (before Docker 25) writes: manifest.json, config, <id>/layer.tar."""
    config = _config(history)
    config_name = _digest(config).split(":")[1] + ".json"
    names = [f"{_digest(data).split(':')[1]}/layer.tar" for data in layers]
    manifest = [{"Config": config_name, "RepoTags": [tag], "Layers": names}]
    with tarfile.open(path, "w") as tar:
        for name, data in zip(names, layers, strict=True):
            _add(tar, name, data)
        _add(tar, config_name, config)
        _add(tar, "manifest.json", json.dumps(manifest).encode())
    return path


def oci_layout(path: Path, layers: list[bytes], history: list[str], tag: str = "1") -> Path:
    """An OCI image layout archive: oci-layout, index.json, blobs/sha256/<digest>."""
    config = _config(history)
    media = {b"\x1f\x8b": "tar+gzip", b"\x28\xb5": "tar+zstd"}
    descriptors = [
        {
            "mediaType": "application/vnd.oci.image.layer.v1." + media.get(data[:2], "tar"),
            "digest": _digest(data),
            "size": len(data),
        }
        for data in layers
    ]
    manifest = json.dumps(
        {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": _digest(config),
                "size": len(config),
            },
            "layers": descriptors,
        }
    ).encode()
    index = {
        "schemaVersion": 2,
        "manifests": [
            {
                "mediaType": "application/vnd.oci.image.manifest.v1+json",
                "digest": _digest(manifest),
                "size": len(manifest),
                "annotations": {"org.opencontainers.image.ref.name": tag},
            }
        ],
    }
    with tarfile.open(path, "w") as tar:
        _add(tar, "oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        _add(tar, "index.json", json.dumps(index).encode())
        for data in [config, manifest, *layers]:
            _add(tar, "blobs/sha256/" + _digest(data).split(":")[1], data)
    return path
