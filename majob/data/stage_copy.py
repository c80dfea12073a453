"""The copy engine of ``majob data stage``: an OBS folder into a directory tree (the mounted
SFS volume), parallel, incremental, resumable, verified (docs/data.md, "Staging OBS -> SFS").

::

    listing --compare with manifest + journal + disk--> to copy --download_object (temp, MD5,
    rename) x jobs, one journal line each--> second listing (source changed?) --> verify pass
    --> manifest complete

Each object goes through ``storage.download.download_object``: written to a temporary name
beside its target, its MD5 checked against the ETag (a single PUT) or the ``md5`` metadata
majob stores on multipart uploads, then renamed into place. An object whose ETag says no MD5
(a multipart upload by another tool) is hashed once on disk and that MD5 recorded. What the
verify pass compares is in ``verify``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TypeVar

from majob.data.manifest import (
    JOURNAL_NAME,
    MANIFEST_NAME,
    Listed,
    Manifest,
    StagedFile,
    drop_journal,
    journal,
    journal_line,
    listing_digest,
    now,
    read_journal,
    read_manifest,
    write_manifest,
)
from majob.data.stage_verify import changes_between, verify
from majob.errors import DataStageError, MajobError, UserInputError
from majob.storage.base import ObjectInfo, ObjectStore
from majob.storage.download import (
    download_object,
    make_parents,
    refuse_file_dir_clashes,
    safe_relative_path,
)
from majob.storage.listing import list_folder
from majob.storage.localstate import file_md5
from majob.storage.obs_answers import is_abandoned_temp
from majob.storage.plan import md5_of, part_size_of
from majob.storage.ranged import is_temp_name
from majob.storage.targets import check_download_targets
from majob.storage.uri import ObsUri
from majob.text import counted, human_bytes

FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
T = TypeVar("T")


@dataclass
class StageReport:
    """What a stage did: files and bytes copied this run, kept from before, the total."""

    source: str
    dest: Path
    files: int = 0
    bytes: int = 0
    copied: int = 0
    copied_bytes: int = 0
    kept: int = 0
    skipped: bool = False  # unchanged source and a complete manifest: nothing copied
    extra: list[str] = field(default_factory=list)  # files on the volume not in the source

    def summary(self) -> str:
        if self.skipped:
            return (
                f"{self.dest}: unchanged, {counted(self.files, 'file')} "
                f"({human_bytes(self.bytes)}) already staged from {self.source}"
            )
        return (
            f"staged {self.source} -> {self.dest}: {counted(self.files, 'file')} "
            f"({human_bytes(self.bytes)}); copied {self.copied} "
            f"({human_bytes(self.copied_bytes)}), kept {self.kept}"
        )


def list_source(store: ObjectStore, src: ObsUri, dest: Path) -> Listed:
    """One listing of ``src``, every key checked (no ``..``, no absolute path, not both ``a``
    and ``a/b``, not majob's own names). Whether this file system can hold each file there is
    checked by ``stage_tree`` for the files it is about to write (``check_download_targets``),
    before the first byte: an unchanged re-stage writes none, and the listing after the copy
    none either."""
    del dest  # the targets are checked where they are written
    prefix = src.as_dir().key
    objects = tuple(o for o in list_folder(store, src) if not o.key.endswith("/"))
    rels = tuple(safe_relative_path(o.key, prefix, bucket=src.bucket) for o in objects)
    reserved = [r for r in rels if r in (MANIFEST_NAME, JOURNAL_NAME)]
    if reserved:
        raise UserInputError(f"the source holds {reserved[0]!r}, the name of majob's manifest")
    refuse_file_dir_clashes(list(rels), src)
    return Listed(objects, rels, listing_digest(objects))


def stage_tree(
    store: ObjectStore,
    src: ObsUri,
    dest: Path,
    *,
    jobs: int = 8,
    full_verify: bool = False,
    on_file: Callable[[StagedFile], None] | None = None,
    listed: Listed | None = None,
) -> StageReport:
    """Make ``dest`` hold the files of the OBS folder ``src``, verified, with a complete
    manifest; ``DataStageError`` (manifest incomplete or stale) when it cannot.

    ``listed`` is a ``list_source`` of the same ``src`` and ``dest`` the caller made just
    before (to size its progress meter): the stage copies from it instead of listing again.
    Nothing is lost by that: the second listing after the copy compares with it, so a change
    since it was made shows as a stale source."""
    src = src.as_dir()
    dest.mkdir(parents=True, exist_ok=True)
    if listed is None:
        listed = list_source(store, src, dest)
    report = StageReport(src.uri, dest, files=len(listed.objects))
    report.bytes = sum(o.size for o in listed.objects)
    previous = read_manifest(dest)
    known = dict(previous.files) if previous and previous.source == src.uri else {}
    known.update(read_journal(dest))
    if (
        previous is not None
        and previous.state == "complete"
        and previous.source == src.uri
        and previous.listing_digest == listed.digest
        and not verify(listed, dest, known, full=full_verify, copied=set())
    ):
        report.skipped, report.kept = True, report.files
        report.extra = _extra_files(dest, set(listed.rels))
        return report
    root = os.fspath(dest) + os.sep
    todo = [
        (info, rel)
        for info, rel in zip(listed.objects, listed.rels, strict=True)
        if not _still_there(known.get(rel), info, root + rel)
    ]
    check_download_targets(dest, [rel for _info, rel in todo], src.key)  # before any write
    manifest = Manifest(src.uri, listed.digest, "incomplete", now(), files=known)
    write_manifest(dest, manifest)
    copied = _copy_all(store, src, dest, todo, manifest, jobs, on_file)
    report.copied, report.copied_bytes = len(copied), sum(known_size(manifest, r) for r in copied)
    report.kept = report.files - report.copied
    _finish(store, src, dest, listed, manifest, copied, full_verify)
    report.extra = _extra_files(dest, set(listed.rels))
    return report


def known_size(manifest: Manifest, rel: str) -> int:
    return manifest.files[rel].size


def _still_there(staged: StagedFile | None, info: ObjectInfo, target: str) -> bool:
    """Whether an earlier run's copy of ``info`` is on disk as it left it (size and mtime)."""
    if staged is None or staged.size != info.size or staged.etag != info.etag.strip('"'):
        return False
    try:
        stat = os.stat(target)
    except OSError:
        return False
    return stat.st_size == staged.size and stat.st_mtime_ns == staged.mtime_ns


def _copy_all(
    store: ObjectStore,
    src: ObsUri,
    dest: Path,
    todo: list[tuple[ObjectInfo, str]],
    manifest: Manifest,
    jobs: int,
    on_file: Callable[[StagedFile], None] | None,
) -> set[str]:
    lock = threading.Lock()
    copied: set[str] = set()

    def fetch(item: tuple[ObjectInfo, str], handle: IO[str]) -> None:
        info, rel = item
        target = dest / rel
        got, verified = download_object(
            store, ObsUri(src.bucket, info.key), target, parent_made=True, size=info.size
        )
        expected, part_size = md5_of(got) if verified else None, None
        if verified and expected is None:  # checked by its multipart ETag, no MD5 of it made
            expected, part_size = got.etag.strip('"'), part_size_of(got)
        staged = StagedFile(
            rel=rel,
            key=info.key,
            size=got.size,
            etag=got.etag.strip('"'),
            md5=expected or file_md5(target),
            mtime_ns=target.stat().st_mtime_ns,
            part_size=part_size,
        )
        with lock:
            journal_line(handle, staged)
            manifest.files[rel] = staged
            copied.add(rel)
        if on_file is not None:
            on_file(staged)

    try:
        make_parents(dest, [rel for _info, rel in todo])
        with journal(dest) as handle:
            # The largest first: a big object overlaps the many small ones instead of trailing.
            todo.sort(key=lambda item: -item[0].size)
            run_workers(lambda item: fetch(item, handle), todo, jobs)
    except (OSError, MajobError) as error:
        if _is_full(error):
            _fail_on_full(dest, manifest, error)
        raise
    return copied


def run_workers(work: Callable[[T], object], items: list[T], jobs: int) -> None:
    """``work(item)`` for every item on up to ``jobs`` threads that take the next item as they
    finish one (no future per item); at the first exception the others finish the item they
    hold and take no more, and that exception is raised."""
    lock = threading.Lock()
    pending = iter(items)
    failures: list[BaseException] = []

    def worker() -> None:
        while not failures:
            with lock:
                item = next(pending, _END)
            if item is _END:
                return
            try:
                work(item)  # type: ignore[arg-type]
            except BaseException as error:
                failures.append(error)
                return

    threads = [
        threading.Thread(target=worker, name=f"majob-stage-{n}", daemon=True)
        for n in range(max(1, min(jobs, len(items))))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


_END = object()


def _is_full(error: BaseException) -> bool:
    """Whether ``error`` is a full volume or quota: an ``OSError`` ENOSPC / EDQUOT, or majob's
    error for one (the store's "cannot write" keeps the ``OSError`` as its cause; the local
    "cannot write" names the reason)."""
    cause = error if isinstance(error, OSError) else error.__cause__
    if isinstance(cause, OSError):
        return cause.errno in FULL_ERRNOS
    if isinstance(error, MajobError):
        text = error.message.lower()
        return any(os.strerror(code).lower() in text for code in FULL_ERRNOS)
    return False


def _fail_on_full(dest: Path, manifest: Manifest, error: BaseException) -> None:
    write_manifest(dest, manifest)  # incomplete, with what did land
    raise DataStageError(
        f"the volume under {dest} is full: {counted(len(manifest.files), 'file')} of the "
        "source landed, the stage is incomplete (nothing is presented as staged)",
        hint="free space or grow the SFS Turbo file system, then run the same stage again: "
        "it resumes",
    ) from error


def _finish(
    store: ObjectStore,
    src: ObsUri,
    dest: Path,
    listed: Listed,
    manifest: Manifest,
    copied: set[str],
    full_verify: bool,
) -> None:
    """A second listing (did the source change while it was copied?), then the verify pass;
    the manifest says complete only when both find nothing."""
    after = list_source(store, src, dest)
    changes = changes_between(listed, after)
    listed_etags = {
        rel: info.etag.strip('"') for info, rel in zip(listed.objects, listed.rels, strict=True)
    }
    changes += [
        f"changed while copied: {f.key}"
        for rel, f in manifest.files.items()
        if rel in copied and f.etag != listed_etags[rel]
    ]
    manifest.finished = now()
    if changes:
        manifest.state, manifest.changes = "stale", changes
        write_manifest(dest, manifest)
        raise DataStageError(
            f"{src} changed while it was staged ({counted(len(changes), 'change')}): "
            + "; ".join(changes[:5]),
            hint="run the stage again once the source is stable: it copies only what changed",
        )
    problems = verify(listed, dest, manifest.files, full=full_verify, copied=copied)
    if problems:
        _forget(dest, manifest, problems)
        raise DataStageError(
            f"the verify pass found {counted(len(problems), 'problem')} under {dest}: "
            + "; ".join(list(problems.values())[:5]),
            hint="run the same stage again: it copies the files that failed",
        )
    manifest.state = "complete"
    write_manifest(dest, manifest)
    drop_journal(dest)


def _forget(dest: Path, manifest: Manifest, failed: Iterable[str]) -> None:
    """The files that failed the verify pass leave the (incomplete) manifest, so the next run
    copies them again even when their size and mtime are what was recorded (a byte changed in
    place, found by ``--verify-full``). The journal goes after it: every line it held is in the
    manifest now, the failed files' too, which must not come back from it."""
    for rel in failed:
        manifest.files.pop(rel, None)
    write_manifest(dest, manifest)
    drop_journal(dest)


def _extra_files(dest: Path, rels: set[str]) -> list[str]:
    """Files under ``dest`` that the source does not hold (left in place, reported). The
    temporary files of a ranged download killed half-way (``ranged.is_temp_name``) are
    removed instead: every object of the listing is on the volume by now (copied or kept), so
    each one left is of an object that is gone or changed since (fetched again, or in one GET).
    So is a single GET's temporary file whose process was killed (``is_abandoned_temp``)."""
    extra: list[str] = []
    folders = [("", os.fspath(dest))]
    while folders:
        below, folder = folders.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                rel = below + entry.name
                if entry.is_dir(follow_symlinks=False):
                    folders.append((rel + "/", entry.path))
                elif rel in rels or rel in (MANIFEST_NAME, JOURNAL_NAME):
                    continue
                elif (is_temp_name(entry.name) or is_abandoned_temp(entry.name)) and not (
                    entry.is_symlink()
                ):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)
                else:
                    extra.append(rel)
    return sorted(extra)
