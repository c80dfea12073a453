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

The tarball is untrusted input: every member is checked to lie inside the file, every layer
header before it is read (``tarscan.py``), a JSON document may hold at most ``MAX_JSON_BYTES``,
and an OCI index may nest ``MAX_INDEX_DEPTH`` deep and never list itself. Whatever the file
holds, the answer is a report or one ``ImageTarError``.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Literal, Protocol

from majob.errors import UserInputError
from majob.image.sizes import format_size
from majob.image.tarscan import TarDamaged, count_entries, count_stream_entries
from majob.text import one_line

GB = 10**9

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_OTHER_MAGIC = {b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz"}
MAX_JSON_BYTES = 16 << 20  # manifests, indexes and configs are kilobytes
MAX_INDEX_DEPTH = 8  # an OCI index may list indexes; real ones nest one or two deep
_INDEX_MEDIA = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)

Level = Literal["error", "warning"]


class ImageTarError(UserInputError):
    """The file is not a readable image tarball (not a tar, truncated, no manifest...). Its
    message quotes names the tarball chose: made one printable line whatever they hold."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(one_line(message), hint=hint)


@dataclass(frozen=True)
class Limits:
    """What a ModelArts image should stay under; tests lower them to trip them cheaply."""

    advised_total: int = 15 * GB
    max_total: int = 30 * GB
    layer_bytes: int = 1 * GB
    layer_entries: int = 100_000


@dataclass(frozen=True)
class ImageFinding:
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
    findings: list[ImageFinding] = field(default_factory=list)

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
            members = _index(outer, path, os.fstat(raw.fileno()).st_size)
            layers: dict[str, Layer] = {}  # a layer several images share is read once
            reports = [
                _inspect_one(outer, raw.fileno(), members, path, manifest, limits, layers)
                for manifest in _manifests(outer, members, path)
            ]
    except (tarfile.TarError, ValueError, OverflowError) as error:
        # tarfile reports some malformed headers as ValueError (a GNU sparse map, a seek
        # past what an offset can hold) rather than ReadError.
        raise ImageTarError(
            f"{path}: not a readable tar file ({_one_line(error)})",
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


def _index(outer: tarfile.TarFile, path: Path, file_size: int) -> dict[str, tarfile.TarInfo]:
    members: dict[str, tarfile.TarInfo] = {}
    try:
        for member in outer:
            # Nothing is read from a member whose header puts its data past the end of the file.
            if member.offset_data + member.size > file_size:
                raise tarfile.ReadError(
                    f"{member.name!r} claims {member.size} bytes, past the end of the file"
                )
            members[_norm(member.name)] = member
    except (tarfile.TarError, ValueError, OverflowError) as error:
        raise ImageTarError(
            f"{path}: truncated or damaged after {len(members)} entries ({_one_line(error)})",
            hint="write the tarball again (docker save -o IMAGE.tar); is the disk full?",
        ) from None
    return members


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split())


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
    if member.size > MAX_JSON_BYTES:
        raise ImageTarError(
            f"{path}: {name} is {format_size(member.size)}, over the "
            f"{format_size(MAX_JSON_BYTES)} an image's JSON documents hold: not an image tarball"
        )
    stream = outer.extractfile(member)
    assert stream is not None  # a regular file always has a stream
    try:
        return json.loads(stream.read())
    except (ValueError, tarfile.TarError) as error:
        raise ImageTarError(f"{path}: {name} is not valid JSON ({_one_line(error)})") from None
    except RecursionError:
        raise ImageTarError(f"{path}: {name} is not valid JSON (nested too deeply)") from None


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
                    tags=_strings(entry.get("RepoTags") or [], "RepoTags"),
                    format="docker-save",
                    config=_optional_string(entry.get("Config"), "Config"),
                    layers=_strings(entry.get("Layers") or [], "Layers"),
                )
                for entry in entries
            ]
    if "index.json" in members:
        found: list[_Manifest] = []
        index = _read_json(outer, members, "index.json", path)
        with _shape(path, "index.json or an image manifest"):
            _walk_index(outer, members, path, index, found, ["index.json"], set())
        if not found:
            raise ImageTarError(f"{path}: index.json lists no image manifest")
        return found
    raise ImageTarError(
        f"{path}: not an image tarball: no manifest.json (docker save) or index.json (OCI)",
        hint="create it with docker save -o IMAGE.tar IMAGE (or skopeo copy to oci-archive:)",
    )


def _strings(value: Any, field: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise TypeError(f"{field} is not a list of strings")
    return value


def _optional_string(value: Any, field: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{field} is not a string")
    return value


def _walk_index(
    outer: tarfile.TarFile,
    members: dict[str, tarfile.TarInfo],
    path: Path,
    index: Any,
    found: list[_Manifest],
    chain: list[str],
    walked: set[str],
) -> None:
    """Add the image manifests ``index`` lists to ``found``; ``chain`` names the indexes that
    led here (the first is index.json), so an index that lists itself is found, not followed;
    ``walked`` the indexes already read, so one listed many times is read once."""
    if len(chain) > MAX_INDEX_DEPTH:
        raise ImageTarError(
            f"{path}: {chain[0]} nests indexes more than {MAX_INDEX_DEPTH} deep: not an image "
            "tarball majob reads"
        )
    for descriptor in index.get("manifests") or []:
        name = _blob(descriptor["digest"])
        if name in chain:
            raise ImageTarError(f"{path}: {name} lists itself (through {' -> '.join(chain)})")
        if name in walked:
            continue
        document = _read_json(outer, members, name, path)
        if descriptor.get("mediaType") in _INDEX_MEDIA or "manifests" in document:
            walked.add(name)
            _walk_index(outer, members, path, document, found, [*chain, name], walked)
            continue
        tag = (descriptor.get("annotations") or {}).get("org.opencontainers.image.ref.name")
        found.append(
            _Manifest(
                tags=_strings([tag] if tag else [], "annotations"),
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
    seen: dict[str, Layer],
) -> ImageReport:
    history = _history(outer, members, path, manifest)
    report = ImageReport(path=str(path), format=manifest.format, tags=manifest.tags)
    for number, name in enumerate(manifest.layers, start=1):
        member = members.get(_norm(name))
        if member is None or not member.isfile():
            raise ImageTarError(
                f"{path}: layer {number} ({name}) is missing: the tarball is truncated",
                hint="write it again with docker save -o IMAGE.tar",
            )
        created_by = history[number - 1] if len(history) == len(manifest.layers) else None
        if member.name not in seen:
            seen[member.name] = _layer(outer, fd, member, number, created_by, path)
        report.layers.append(replace(seen[member.name], index=number, created_by=created_by))
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
            size, entries = count_stream_entries(gzip.GzipFile(fileobj=stream, mode="rb"))
        elif magic.startswith(ZSTD_MAGIC):
            compression = "zstd"
            size, entries = count_stream_entries(_zstd_reader(stream, where))
        else:
            compression = "none"
            # Read in place: headers only, content skipped (see tarscan.py).
            size = member.size
            entries = count_entries(fd, member.offset_data, member.size)
    except (tarfile.TarError, EOFError, OSError, zlib.error, TarDamaged) as error:
        raise ImageTarError(
            f"{where} is truncated or damaged ({_one_line(error)})",
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


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _ZstdErrorsAsOSError:
    """zstandard's ``ZstdError`` (corrupt data) is no ``OSError``: say it as one, like gzip."""

    def __init__(self, reader: _Readable, error: type[Exception]) -> None:
        self.reader = reader
        self.error = error

    def read(self, size: int = -1, /) -> bytes:
        try:
            return self.reader.read(size)
        except self.error as error:
            raise OSError(f"zstd: {error}") from None


def _zstd_reader(stream: IO[bytes], where: str) -> _Readable:
    try:
        import zstandard
    except ImportError:
        raise ImageTarError(
            f"{where} is zstd-compressed and the zstandard package is not installed",
            hint="pip install 'majob[image]'",
        ) from None
    # zstd:chunked layers are many frames, one after the other: read them all.
    reader: _Readable = zstandard.ZstdDecompressor().stream_reader(stream, read_across_frames=True)
    return _ZstdErrorsAsOSError(reader, zstandard.ZstdError)


# -- checks ----------------------------------------------------------------------------------


def _check(report: ImageReport, limits: Limits) -> list[ImageFinding]:
    findings: list[ImageFinding] = []
    total = report.total_uncompressed
    if total > limits.max_total:
        findings.append(
            ImageFinding(
                "error",
                f"image is {format_size(total)}, over the {format_size(limits.max_total)} "
                "ModelArts accepts: move data and code out of it, drop build caches",
            )
        )
    elif total > limits.advised_total:
        findings.append(
            ImageFinding(
                "warning",
                f"image is {format_size(total)}, over the {format_size(limits.advised_total)} "
                "the guide advises: it will be slow to pull on every node",
            )
        )
    for layer in report.layers:
        made_by = f"; created by: {_short(layer.created_by)}" if layer.created_by else ""
        if layer.uncompressed_bytes > limits.layer_bytes:
            findings.append(
                ImageFinding(
                    "error",
                    f"layer {layer.index} is {format_size(layer.uncompressed_bytes)}, over "
                    f"{format_size(limits.layer_bytes)} per layer: split the step that made it"
                    f"{made_by}",
                )
            )
        if layer.entries > limits.layer_entries:
            findings.append(
                ImageFinding(
                    "error",
                    f"layer {layer.index} has {layer.entries:,} entries, over "
                    f"{limits.layer_entries:,} per layer: split the step or clean caches"
                    f"{made_by}",
                )
            )
    return findings


def _short(command: str, width: int = 120) -> str:
    command = one_line(" ".join(command.split()))
    return command if len(command) <= width else command[: width - 3] + "..."
