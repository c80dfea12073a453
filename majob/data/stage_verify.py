"""The verify pass of a stage, and what changed between two listings.

Every file of the source listing must be on the volume with the listing's size. Its MD5 must be
the one the source says: the ETag of a single PUT, or the ``md5`` metadata majob stores on its
multipart uploads; for another tool's multipart object (an ETag that is no MD5) the MD5 majob
recorded when it wrote the file. How deep the bytes are read:

- a file copied by this run was hashed on disk, after it was written and before it was renamed
  into place (``download_object``): its recorded MD5 is compared, the bytes not read again;
- a file kept from an earlier run is compared by size and modification time with what the
  manifest recorded when it landed (a changed file shows a new mtime);
- ``full=True`` (``majob data stage --verify-full``) re-reads and hashes every file (a file
  recorded with its multipart ETag, ``StagedFile.part_size``, by its parts).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from majob.data.manifest import Listed, StagedFile
from majob.storage.localstate import file_md5, file_multipart_etag
from majob.storage.plan import md5_of


def verify(
    listed: Listed,
    dest: Path,
    staged: Mapping[str, StagedFile],
    *,
    full: bool,
    copied: set[str],
) -> dict[str, str]:
    """The problems found, one line each, by the file's relative path (in the listing's
    order); empty when the tree is the source's."""
    problems: dict[str, str] = {}
    root = os.fspath(dest) + os.sep
    for info, rel in zip(listed.objects, listed.rels, strict=True):
        record = staged.get(rel)
        target = root + rel
        try:
            stat = os.stat(target)
        except OSError:
            problems[rel] = f"missing: {rel}"
            continue
        if stat.st_size != info.size:
            problems[rel] = f"size {stat.st_size} != {info.size}: {rel}"
            continue
        expected = md5_of(info) or (record.md5 if record else None)
        if record is None or expected is None or record.md5 != expected:
            problems[rel] = f"checksum not recorded or different: {rel}"
        elif full:
            if _digest(Path(target), record) != expected:
                problems[rel] = f"checksum differs: {rel}"
        elif rel not in copied and stat.st_mtime_ns != record.mtime_ns:
            problems[rel] = f"modified since it was staged: {rel}"
    return problems


def _digest(path: Path, record: StagedFile) -> str:
    """What ``record.md5`` says of the file: its MD5, or its multipart ETag at ``part_size``."""
    if record.part_size:
        return file_multipart_etag(path, record.part_size)
    return file_md5(path)


def changes_between(before: Listed, after: Listed) -> list[str]:
    """What a second listing says changed: keys added, removed, or with a new size or ETag."""
    if before.digest == after.digest:
        return []
    old = {o.key: (o.size, o.etag) for o in before.objects}
    new = {o.key: (o.size, o.etag) for o in after.objects}
    lines = [f"added: {k}" for k in sorted(new.keys() - old.keys())]
    lines += [f"removed: {k}" for k in sorted(old.keys() - new.keys())]
    lines += [f"changed: {k}" for k in sorted(old.keys() & new.keys()) if old[k] != new[k]]
    return lines
