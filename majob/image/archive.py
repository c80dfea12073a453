"""The outer tarball of an image (``docker save`` or an OCI layout), read as untrusted input:
its members indexed (each must lie inside the file), its JSON documents read (at most
``MAX_JSON_BYTES``, of the expected shape), and the images it holds found through
``manifest.json`` or ``index.json`` (an index may nest ``MAX_INDEX_DEPTH`` deep and never list
itself). Whatever the file holds, the answer is what was asked or one ``ImageTarError``.
"""

from __future__ import annotations

import contextlib
import json
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from majob.errors import UserInputError
from majob.sizes import format_size
from majob.text import one_line

MAX_JSON_BYTES = 16 << 20  # manifests, indexes and configs are kilobytes
MAX_INDEX_DEPTH = 8  # an OCI index may list indexes; real ones nest one or two deep
_INDEX_MEDIA = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
)


class ImageTarError(UserInputError):
    """The file is not a readable image tarball (not a tar, truncated, no manifest...). Its
    message quotes names the tarball chose: made one printable line whatever they hold."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(one_line(message), hint=hint)


@dataclass(frozen=True)
class Manifest:
    tags: list[str]
    format: Literal["docker-save", "oci"]
    config: str | None
    layers: list[str]


def index_members(outer: tarfile.TarFile, path: Path, file_size: int) -> dict[str, tarfile.TarInfo]:
    members: dict[str, tarfile.TarInfo] = {}
    try:
        for member in outer:
            # Nothing is read from a member whose header puts its data past the end of the file.
            if member.offset_data + member.size > file_size:
                raise tarfile.ReadError(
                    f"{member.name!r} claims {member.size} bytes, past the end of the file"
                )
            members[member_name(member.name)] = member
    except (tarfile.TarError, ValueError, OverflowError) as error:
        raise ImageTarError(
            f"{path}: truncated or damaged after {len(members)} entries ({error_line(error)})",
            hint="write the tarball again (docker save -o IMAGE.tar); is the disk full?",
        ) from None
    return members


def error_line(error: BaseException) -> str:
    return " ".join(str(error).split())


def member_name(name: str) -> str:
    return name[2:] if name.startswith("./") else name


def _read_json(
    outer: tarfile.TarFile, members: dict[str, tarfile.TarInfo], name: str, path: Path
) -> Any:
    member = members.get(member_name(name))
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
        raise ImageTarError(f"{path}: {name} is not valid JSON ({error_line(error)})") from None
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


def manifests(
    outer: tarfile.TarFile, members: dict[str, tarfile.TarInfo], path: Path
) -> list[Manifest]:
    # Docker ≥ 25 writes both manifest.json and an OCI layout; manifest.json carries the tags.
    if "manifest.json" in members:
        entries = _read_json(outer, members, "manifest.json", path)
        if not isinstance(entries, list) or not entries:
            raise ImageTarError(f"{path}: manifest.json lists no image")
        with _shape(path, "manifest.json"):
            return [
                Manifest(
                    tags=_strings(entry.get("RepoTags") or [], "RepoTags"),
                    format="docker-save",
                    config=_optional_string(entry.get("Config"), "Config"),
                    layers=_strings(entry.get("Layers") or [], "Layers"),
                )
                for entry in entries
            ]
    if "index.json" in members:
        found: list[Manifest] = []
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
    found: list[Manifest],
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
            Manifest(
                tags=_strings([tag] if tag else [], "annotations"),
                format="oci",
                config=_blob(document["config"]["digest"]),
                layers=[_blob(layer["digest"]) for layer in document.get("layers") or []],
            )
        )


def history(
    outer: tarfile.TarFile, members: dict[str, tarfile.TarInfo], path: Path, manifest: Manifest
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
