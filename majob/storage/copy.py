"""Copy every object of one OBS folder into another, inside OBS (the bytes never come down to
this machine), all or nothing.

An object up to CopyObject's 5 GB is one copy request; a bigger one (a large model's checkpoint)
is copied in parts (UploadPartCopy of 1 GiB ranges) and completed. A copy that fails or is
interrupted part-way deletes what it had copied (and aborts the multipart copy under way) before
the error goes on: a half-copied folder would look like a whole one to whoever lists it next.
Zero-byte ``dir/`` objects (the console's folder markers) hold nothing and are not copied.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from majob.errors import StorageError, UserInputError
from majob.storage.base import ObjectInfo, ObjectStore, UploadedPart
from majob.storage.uri import ObsUri
from majob.text import counted

COPY_LIMIT = 5 * 1024**3  # the largest object one CopyObject request copies (OBS: 5 GB)
PART_SIZE = 1024**3  # a range of a bigger object copied as one part


@dataclass(frozen=True)
class FolderCopy:
    """What a copy did: the source, the target and the target keys it wrote."""

    source: ObsUri
    target: ObsUri
    keys: tuple[str, ...]
    size: int


def folder_objects(store: ObjectStore, folder: ObsUri) -> list[ObjectInfo]:
    """The objects under ``folder`` that hold data (folder markers left out)."""
    prefix = folder.as_dir().key
    return [
        info
        for info in store.list_all(folder.bucket, prefix)
        if not (info.key.endswith("/") and info.size == 0)
    ]


def _overlap(a: ObsUri, b: ObsUri) -> bool:
    return a.bucket == b.bucket and (a.key.startswith(b.key) or b.key.startswith(a.key))


def copy_folder(
    store: ObjectStore,
    source: ObsUri,
    target: ObsUri,
    *,
    limit: int = COPY_LIMIT,
    part_size: int = PART_SIZE,
    on_object: Callable[[ObjectInfo], None] | None = None,
) -> FolderCopy:
    """Copy each object under ``source`` to the same place under ``target`` (two folders, neither
    inside the other); ``on_object`` sees each before it is copied. All or nothing: on any
    failure, Ctrl-C included, the copies made are deleted and the error is raised."""
    source, target = source.as_dir(), target.as_dir()
    if _overlap(source, target):
        raise UserInputError(f"cannot copy {source} into {target}: one folder holds the other")
    objects = folder_objects(store, source)
    written: list[str] = []
    try:
        for info in objects:
            if on_object is not None:
                on_object(info)
            to_key = target.key + info.key[len(source.key) :]
            if info.size <= limit:
                store.copy_object(source.bucket, info.key, target.bucket, to_key)
            else:
                _copy_in_parts(store, (source.bucket, info), (target.bucket, to_key), part_size)
            written.append(to_key)
    except BaseException as error:
        _undo(store, target, written, error)
        raise
    return FolderCopy(source, target, tuple(written), sum(info.size for info in objects))


def _copy_in_parts(
    store: ObjectStore, source: tuple[str, ObjectInfo], target: tuple[str, str], part_size: int
) -> None:
    """One object over the CopyObject limit, as a multipart upload of copied ranges."""
    bucket, info = source
    to_bucket, to_key = target
    head = store.head(bucket, info.key)
    upload = store.create_multipart(to_bucket, to_key, metadata=head.metadata if head else None)
    try:
        parts: list[UploadedPart] = []
        for number, first in enumerate(range(0, info.size, part_size), start=1):
            last = min(first + part_size, info.size) - 1
            parts.append(
                store.copy_part(to_bucket, upload, number, (bucket, info.key), first, last)
            )
        store.complete_multipart(to_bucket, upload, parts)
    except BaseException:
        store.abort_multipart(to_bucket, upload)
        raise


def _undo(store: ObjectStore, target: ObsUri, written: list[str], error: BaseException) -> None:
    """Delete the copies made before ``error``; when that fails too, say what is left."""
    if not written:
        return
    try:
        store.delete_many(target.bucket, written)
    except StorageError as undo:
        stopped = getattr(error, "message", "") or type(error).__name__
        raise StorageError(
            f"the copy into {target} stopped ({stopped}), and {counted(len(written), 'object')} it "
            f"had copied could not be deleted ({undo.message})",
            hint=f"delete them before using the folder: majob obs rm -r {target}",
        ) from error
