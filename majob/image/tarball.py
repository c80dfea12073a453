"""Inspect a ``docker save`` or OCI-layout image tarball without unpacking it.

The outer tarball must be uncompressed (as ``docker save`` and ``skopeo copy oci-archive:``
write it) so each layer can be read in place. A layer is read as a stream: an uncompressed
layer by skipping from header to header (no file content is read), a gzip or zstd layer through
a streaming decompressor. Memory stays flat whatever the size: no layer is held, and no list of
entries is kept.

Sizes are decimal (1 GB = 10**9 bytes). Checks (reference: the migration guide's image rules,
modelarts.md §3.2): the image total against the 15 GB advice and the 30 GB limit, each layer's
uncompressed size against 1 GB and its entry count against 100,000, each over-limit layer named
with the history entry (``created_by``) that made it. Not supported: a compressed outer tarball
(``docker save | gzip``: gunzip it first), bzip2/xz layers, and zstd layers without the
``zstandard`` package (``pip install 'majob[image]'``).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from majob.errors import UserInputError
from majob.image.sizes import format_size
from majob.image.tarscan import TarDamaged, count_entries

GB = 10**9

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_OTHER_MAGIC = {b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz"}
_STREAM_BUFFER = 1 << 20  # read compressed layers a megabyte at a time
_INDEX_MEDIA = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)

Level = Literal["error", "warning"]


class ImageTarError(UserInputError):
    """The file is not a readable image tarball (not a tar, truncated, no manifest...)."""


@dataclass(frozen=True)
class Limits:
    """What a ModelArts image should stay under; tests lower them to trip them cheaply."""

    advised_total: int = 15 * GB
    max_total: int = 30 * GB
    layer_bytes: int = 1 * GB
    layer_entries: int = 100_000


@dataclass(frozen=True)
class Finding:
    level: Level
    message: str


@dataclass
class Layer:
    index: int  # 1-based, base layer first
    blob: str  # the member of the tarball holding the layer
    compression: str  # "none", "gzip" or "zstd"
    compressed_bytes: int
    uncompressed_bytes: int
    entries: int  # files, directories, links... every tar entry of the layer
    created_by: str | None  # the history entry that made the layer, when the config says


@dataclass
class ImageReport:
    path: str
    format: Literal["docker-save", "oci"]
    tags: list[str]
    layers: list[Layer] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def total_compressed(self) -> int:
        return sum(layer.compressed_bytes for layer in self.layers)

    @property
    def total_uncompressed(self) -> int:
        return sum(layer.uncompressed_bytes for layer in self.layers)

    @property
    def ok(self) -> bool:
        return not any(f.level == "error" for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["total_compressed"] = self.total_compressed
        data["total_uncompressed"] = self.total_uncompressed
        data["ok"] = self.ok
        return data


def inspect_image(path: str | Path, limits: Limits | None = None) -> list[ImageReport]:
    """One report per image in the tarball at ``path``; raise ``ImageTarError`` if unreadable."""
    limits = limits or Limits()
    path = Path(path)
    try:
        with path.open("rb") as raw:
            head = raw.read(6)
    except OSError as error:
        raise ImageTarError(f"{path}: cannot read: {error.strerror}") from None
    if head.startswith(GZIP_MAGIC):
        raise ImageTarError(
            f"{path}: the tarball itself is gzip-compressed; majob reads layers in place",
            hint=f"decompress it first: gunzip -k {path} (or docker save without | gzip)",
        )
    try:
        with path.open("rb") as raw, tarfile.open(fileobj=raw, mode="r:") as outer:
            members = _index(outer, path)
            reports = [
                _inspect_one(outer, raw.fileno(), members, path, manifest, limits)
                for manifest in _manifests(outer, members, path)
            ]
    except tarfile.ReadError as error:
        raise ImageTarError(
            f"{path}: not a readable tar file ({error})",
            hint="give the file written by `docker save -o IMAGE.tar` or an OCI-layout archive",
        ) from None
    return reports


# -- the outer tarball -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Manifest:
    tags: list[str]
    format: Literal["docker-save", "oci"]
    config: str | None
    layers: list[str]


def _index(outer: tarfile.TarFile, path: Path) -> dict[str, tarfile.TarInfo]:
    members: dict[str, tarfile.TarInfo] = {}
    try:
        for member in outer:
            members[_norm(member.name)] = member
    except tarfile.ReadError as error:
        raise ImageTarError(
            f"{path}: truncated or damaged after {len(members)} entries ({error})",
            hint="write the tarball again (docker save -o IMAGE.tar); is the disk full?",
        ) from None
    return members


def _norm(name: str) -> str:
    return name[2:] if name.startswith("./") else name


def _read_json(
    outer: tarfile.TarFile, members: dict[str, tarfile.TarInfo], name: str, path: Path
) -> Any:
    member = members.get(_norm(name))
    if member is None or not member.isfile():
        raise ImageTarError(
            f"{path}: {name} is missing: the tarball is truncated or not an image",
            hint="write it again with docker save -o IMAGE.tar",
        )
    stream = outer.extractfile(member)
    assert stream is not None  # a regular file always has a stream
    try:
        return json.loads(stream.read())
    except (ValueError, tarfile.ReadError) as error:
        raise ImageTarError(f"{path}: {name} is not valid JSON ({error})") from None


@contextlib.contextmanager
def _shape(path: Path, document: str) -> Iterator[None]:
    """Turn a JSON document of the wrong shape (a missing key, a list for a dict) into one line."""
    try:
        yield
    except (KeyError, TypeError, AttributeError) as error:
        raise ImageTarError(
            f"{path}: {document} has an unexpected shape ({type(error).__name__}: {error})",
            hint="is this an image tarball? docker save -o IMAGE.tar IMAGE writes one",
        ) from None


def _blob(digest: str) -> str:
    algorithm, _, hexdigest = digest.partition(":")
    return f"blobs/{algorithm}/{hexdigest}"


def _manifests(
    outer: tarfile.TarFile, members: dict[str, tarfile.TarInfo], path: Path
) -> list[_Manifest]:
    # Docker ≥ 25 writes both manifest.json and an OCI layout; manifest.json carries the tags.
    if "manifest.json" in members:
        entries = _read_json(outer, members, "manifest.json", path)
        if not isinstance(entries, list) or not entries:
            raise ImageTarError(f"{path}: manifest.json lists no image")
        with _shape(path, "manifest.json"):
            return [
                _Manifest(
                    tags=list(entry.get("RepoTags") or []),
                    format="docker-save",
                    config=entry.get("Config"),
                    layers=list(entry.get("Layers") or []),
                )
                for entry in entries
            ]
    if "index.json" in members:
        found: list[_Manifest] = []
        index = _read_json(outer, members, "index.json", path)
        with _shape(path, "index.json or an image manifest"):
            _walk_index(outer, members, path, index, found)
        if not found:
            raise ImageTarError(f"{path}: index.json lists no image manifest")
        return found
    raise ImageTarError(
        f"{path}: not an image tarball: no manifest.json (docker save) or index.json (OCI)",
        hint="create it with docker save -o IMAGE.tar IMAGE (or skopeo copy to oci-archive:)",
    )


def _walk_index(
    outer: tarfile.TarFile,
    members: dict[str, tarfile.TarInfo],
    path: Path,
    index: Any,
    found: list[_Manifest],
) -> None:
    for descriptor in index.get("manifests") or []:
        document = _read_json(outer, members, _blob(descriptor["digest"]), path)
        if descriptor.get("mediaType") in _INDEX_MEDIA or "manifests" in document:
            _walk_index(outer, members, path, document, found)
            continue
        tag = (descriptor.get("annotations") or {}).get("org.opencontainers.image.ref.name")
        found.append(
            _Manifest(
                tags=[tag] if tag else [],
                format="oci",
                config=_blob(document["config"]["digest"]),
                layers=[_blob(layer["digest"]) for layer in document.get("layers") or []],
            )
        )


def _inspect_one(
    outer: tarfile.TarFile,
    fd: int,
    members: dict[str, tarfile.TarInfo],
    path: Path,
    manifest: _Manifest,
    limits: Limits,
) -> ImageReport:
    history = _history(outer, members, path, manifest)
    report = ImageReport(path=str(path), format=manifest.format, tags=manifest.tags)
    for number, name in enumerate(manifest.layers, start=1):
        member = members.get(_norm(name))
        if member is None:
            raise ImageTarError(
                f"{path}: layer {number} ({name}) is missing: the tarball is truncated",
                hint="write it again with docker save -o IMAGE.tar",
            )
        created_by = history[number - 1] if len(history) == len(manifest.layers) else None
        report.layers.append(_layer(outer, fd, member, number, created_by, path))
    report.findings = _check(report, limits)
    return report


def _history(
    outer: tarfile.TarFile, members: dict[str, tarfile.TarInfo], path: Path, manifest: _Manifest
) -> list[str]:
    """``created_by`` of each history entry that made a layer (empty layers left out)."""
    if manifest.config is None:
        return []
    config = _read_json(outer, members, manifest.config, path)
    with _shape(path, f"the image config {manifest.config}"):
        return [
            str(entry.get("created_by", "")).strip()
            for entry in config.get("history") or []
            if not entry.get("empty_layer")
        ]


# -- one layer -------------------------------------------------------------------------------


def _layer(
    outer: tarfile.TarFile,
    fd: int,
    member: tarfile.TarInfo,
    number: int,
    created_by: str | None,
    path: Path,
) -> Layer:
    stream = outer.extractfile(member)
    assert stream is not None
    magic = stream.read(6)
    stream.seek(0)
    where = f"{path}: layer {number} ({member.name})"
    for prefix, name in _OTHER_MAGIC.items():
        if magic.startswith(prefix):
            raise ImageTarError(f"{where} is {name}-compressed, which majob does not read")
    try:
        if magic.startswith(GZIP_MAGIC):
            compression = "gzip"
            size, entries = _count_stream(gzip.GzipFile(fileobj=stream, mode="rb"))
        elif magic.startswith(ZSTD_MAGIC):
            compression = "zstd"
            size, entries = _count_stream(_zstd_reader(stream, where))
        else:
            compression = "none"
            # Read in place: headers only, content skipped (see tarscan.py).
            size = member.size
            entries = count_entries(fd, member.offset_data, member.size)
    except (tarfile.ReadError, EOFError, OSError, zlib.error, TarDamaged) as error:
        raise ImageTarError(
            f"{where} is truncated or damaged ({error})",
            hint="write the tarball again (docker save -o IMAGE.tar)",
        ) from None
    return Layer(
        index=number,
        blob=_norm(member.name),
        compression=compression,
        compressed_bytes=member.size,
        uncompressed_bytes=size,
        entries=entries,
        created_by=created_by,
    )


def _entries(layer: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    # TarFile keeps every member it reads in .members; dropping them keeps memory flat for
    # layers of millions of entries.
    kept: list[tarfile.TarInfo] = layer.members  # type: ignore[attr-defined]  # not in typeshed
    while (info := layer.next()) is not None:
        kept.clear()
        yield info


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _Counting:
    """A read-only stream that counts the bytes read through it."""

    def __init__(self, inner: _Readable) -> None:
        self.inner = inner
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self.inner.read(size)
        self.count += len(data)
        return data


def _count_stream(decompressed: _Readable) -> tuple[int, int]:
    """(uncompressed bytes, entries) of a compressed layer, decompressed once, in buffers."""
    counting = _Counting(decompressed)
    with tarfile.open(fileobj=counting, mode="r|", bufsize=_STREAM_BUFFER) as layer:  # type: ignore[call-overload]
        entries = sum(1 for _ in _entries(layer))
    while counting.read(_STREAM_BUFFER):  # the end-of-archive padding after the last entry
        pass
    return counting.count, entries


def _zstd_reader(stream: IO[bytes], where: str) -> _Readable:
    try:
        import zstandard
    except ImportError:
        raise ImageTarError(
            f"{where} is zstd-compressed and the zstandard package is not installed",
            hint="pip install 'majob[image]'",
        ) from None
    reader: _Readable = zstandard.ZstdDecompressor().stream_reader(stream)
    return reader


# -- checks ----------------------------------------------------------------------------------


def _check(report: ImageReport, limits: Limits) -> list[Finding]:
    findings: list[Finding] = []
    total = report.total_uncompressed
    if total > limits.max_total:
        findings.append(
            Finding(
                "error",
                f"image is {format_size(total)}, over the {format_size(limits.max_total)} "
                "ModelArts accepts: move data and code out of it, drop build caches",
            )
        )
    elif total > limits.advised_total:
        findings.append(
            Finding(
                "warning",
                f"image is {format_size(total)}, over the {format_size(limits.advised_total)} "
                "the guide advises: it will be slow to pull on every node",
            )
        )
    for layer in report.layers:
        made_by = f"; created by: {_short(layer.created_by)}" if layer.created_by else ""
        if layer.uncompressed_bytes > limits.layer_bytes:
            findings.append(
                Finding(
                    "error",
                    f"layer {layer.index} is {format_size(layer.uncompressed_bytes)}, over "
                    f"{format_size(limits.layer_bytes)} per layer: split the step that made it"
                    f"{made_by}",
                )
            )
        if layer.entries > limits.layer_entries:
            findings.append(
                Finding(
                    "error",
                    f"layer {layer.index} has {layer.entries:,} entries, over "
                    f"{limits.layer_entries:,} per layer: split the step or clean caches"
                    f"{made_by}",
                )
            )
    return findings


def _short(command: str, width: int = 120) -> str:
    command = " ".join(command.split())
    return command if len(command) <= width else command[: width - 3] + "..."
