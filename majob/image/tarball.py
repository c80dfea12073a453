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

``archive.py`` reads the outer tarball (members, JSON documents, manifests), ``layers.py`` one
layer; this module puts the report together and checks it against the limits.
"""

from __future__ import annotations

import os
import tarfile
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from majob.image.archive import (
    ImageTarError,
    Manifest,
    error_line,
    history,
    index_members,
    manifests,
    member_name,
)
from majob.image.layers import GZIP_MAGIC, Layer, read_layer
from majob.sizes import format_size
from majob.text import one_line

GB = 10**9

Level = Literal["error", "warning"]


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
            members = index_members(outer, path, os.fstat(raw.fileno()).st_size)
            layers: dict[str, Layer] = {}  # a layer several images share is read once
            reports = [
                _inspect_one(outer, raw.fileno(), members, path, manifest, limits, layers)
                for manifest in manifests(outer, members, path)
            ]
    except (tarfile.TarError, ValueError, OverflowError) as error:
        # tarfile reports some malformed headers as ValueError (a GNU sparse map, a seek
        # past what an offset can hold) rather than ReadError.
        raise ImageTarError(
            f"{path}: not a readable tar file ({error_line(error)})",
            hint="give the file written by `docker save -o IMAGE.tar` or an OCI-layout archive",
        ) from None
    return reports


def _inspect_one(
    outer: tarfile.TarFile,
    fd: int,
    members: dict[str, tarfile.TarInfo],
    path: Path,
    manifest: Manifest,
    limits: Limits,
    seen: dict[str, Layer],
) -> ImageReport:
    made_by = history(outer, members, path, manifest)
    report = ImageReport(path=str(path), format=manifest.format, tags=manifest.tags)
    for number, name in enumerate(manifest.layers, start=1):
        member = members.get(member_name(name))
        if member is None or not member.isfile():
            raise ImageTarError(
                f"{path}: layer {number} ({name}) is missing: the tarball is truncated",
                hint="write it again with docker save -o IMAGE.tar",
            )
        created_by = made_by[number - 1] if len(made_by) == len(manifest.layers) else None
        if member.name not in seen:
            seen[member.name] = read_layer(outer, fd, member, number, created_by, path)
        report.layers.append(replace(seen[member.name], index=number, created_by=created_by))
    report.findings = _check(report, limits)
    return report


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
