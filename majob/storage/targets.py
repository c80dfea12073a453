"""The names a copy will write, checked before it writes the first byte.

A copy that stops half-way leaves a tree nobody asked for: ``cp -r`` of a prefix holding one key
with a 1015-byte path segment wrote eleven files before the twelfth failed. So every target is
checked first, against what will hold it:

- downloads: each path segment against the local file system's name limit (``NAME_MAX``, 255
  bytes on most), the whole path against ``PATH_MAX``, an existing file where a directory must
  go, an existing directory where a file must go;
- uploads: the key must be UTF-8 (a file system may hold names that are not) and at most
  ``MAX_KEY_BYTES`` (1024) long.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from majob.errors import UserInputError
from majob.storage.uri import MAX_KEY_BYTES, ObsUri
from majob.text import printable

_SHOWN = 120  # characters of a long name an error shows (its start and its end)


def shown(name: str) -> str:
    """``name`` escaped, its middle left out when it is long (a 1000-byte key stays readable)."""
    text = printable(name)
    if len(text) <= _SHOWN:
        return text
    return f"{text[: _SHOWN - 40]}...{text[-37:]}"


def upload_key(dest: ObsUri, rel: str) -> str:
    """The key a file at ``rel`` (``/``-separated, below the source) gets below ``dest``."""
    key = dest.as_dir().key + rel
    try:
        size = len(key.encode("utf-8"))
    except UnicodeEncodeError:
        raise UserInputError(
            f"cannot upload {shown(rel)}: its name is not UTF-8 (the file system holds it as "
            "bytes an OBS key cannot hold); nothing was uploaded",
            hint="rename it, or leave it out with a line in .majobignore",
        ) from None
    if size > MAX_KEY_BYTES:
        raise UserInputError(
            f"cannot upload {shown(rel)}: its key would be {size} bytes, over the "
            f"{MAX_KEY_BYTES} OBS allows; nothing was uploaded",
            hint="shorten the path, or leave it out with a line in .majobignore",
        )
    return dest.join(rel).key


def check_download_targets(dest: Path, rels: Sequence[str], prefix: str) -> None:
    """Refuse (``UserInputError``) before anything is written when one of the ``/``-separated
    ``rels`` (the keys below ``prefix``) cannot be written below ``dest``."""
    holder = _existing_ancestor(dest)
    name_max = _limit(holder, "PC_NAME_MAX", 255)
    path_max = _limit(holder, "PC_PATH_MAX", 4096)
    base = len(os.fsencode(dest.absolute()))
    parents_seen: set[Path] = set()

    def refuse(rel: str, problem: str, hint: str) -> UserInputError:
        return UserInputError(
            f"cannot download {shown(prefix + rel)}: {problem}; nothing was written", hint=hint
        )

    too_long = "rename the object on OBS: this file system cannot hold that name"
    in_the_way = "move it away, or download into an empty directory"

    for rel in rels:
        for segment in rel.split("/"):
            size = len(os.fsencode(segment))
            if size > name_max:
                raise refuse(
                    rel,
                    f"a path segment of {size} bytes, over the {name_max} the file system at "
                    f"{printable(str(holder))} allows in a name",
                    too_long,
                )
        if base + 1 + len(os.fsencode(rel)) >= path_max:
            raise refuse(rel, f"its local path would be over {path_max} bytes (PATH_MAX)", too_long)
        target = dest / rel
        parent = target.parent
        while parent != dest and parent not in parents_seen:
            parents_seen.add(parent)
            if parent.exists() and not parent.is_dir():
                raise refuse(
                    rel, f"{printable(str(parent))} is a file, not a directory", in_the_way
                )
            parent = parent.parent
        if target.is_dir():
            raise refuse(rel, f"{printable(str(target))} is a directory, not a file", in_the_way)


def _existing_ancestor(path: Path) -> Path:
    path = path.absolute()
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


def _limit(path: Path, name: str, default: int) -> int:
    try:
        return os.pathconf(path, name)
    except (OSError, ValueError):
        return default
