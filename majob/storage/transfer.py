"""The apply step of a sync: move what the plan says, verify it, leave nothing half-done.

Small files go through a thread pool sharing one store (one client, keep-alive connections); each
PUT carries Content-MD5 and its ETag is checked against the local MD5. Files at or above the
multipart threshold are sent in parts, several in flight, into an upload created with the file's
MD5 as metadata; the upload is recorded locally first, so a run that is killed resumes it (parts
already stored are not sent again) when the same file (key, size, MD5, part size) is synced
again. At the end, multipart uploads left under the prefix by earlier runs are aborted.
On a storage error the uploads this run started are aborted; an interrupted run (Ctrl-C) keeps
them for the next run to resume.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from majob.errors import MajobError, StorageError, StorageIntegrityError, StorageNotFound
from majob.storage.base import MultipartUpload, ObjectInfo, ObjectStore, UploadedPart
from majob.storage.localstate import UploadRecord, UploadRecords
from majob.storage.plan import MD5_METADATA, PlannedUpload, SyncPlan, counted, human_bytes, md5_of
from majob.storage.pool import run_all
from majob.storage.retry import with_retries

MiB = 1 << 20
MIN_PART_SIZE = 100 * 1024  # OBS: every part but the last is at least 100 KiB
MAX_PARTS = 10_000
DELETE_BATCH = 1000


@dataclass(frozen=True)
class TransferOptions:
    """How hard and how: ``jobs`` files (or parts) in flight, when to switch to multipart."""

    jobs: int = 8
    multipart_threshold: int = 64 * MiB
    part_size: int = 16 * MiB
    attempts: int = 3  # per transfer, on top of the store's own per-request retries
    progress: bool | None = None  # None: a progress bar only on a terminal

    def part_size_for(self, size: int) -> int:
        """The part size for a file of ``size`` bytes, raised to stay within 10,000 parts."""
        part = max(self.part_size, MIN_PART_SIZE, math.ceil(size / MAX_PARTS))
        return part


@dataclass
class SyncResult:
    """What a sync did."""

    uploaded: int = 0
    uploaded_bytes: int = 0
    skipped: int = 0
    deleted: int = 0
    resumed_parts: int = 0
    aborted_uploads: int = 0
    seconds: float = 0.0
    errors: list[str] = field(default_factory=list)

    def summary_line(self) -> str:
        rate = self.uploaded_bytes / self.seconds if self.seconds > 0 else 0.0
        parts = [
            f"uploaded {counted(self.uploaded, 'file')} ({human_bytes(self.uploaded_bytes)}, "
            f"{human_bytes(int(rate))}/s)",
            f"skipped {self.skipped}",
            f"deleted {self.deleted}",
        ]
        if self.resumed_parts:
            parts.append(f"resumed {counted(self.resumed_parts, 'part')}")
        if self.aborted_uploads:
            parts.append(f"aborted {counted(self.aborted_uploads, 'stale upload')}")
        return ", ".join(parts) + f" in {self.seconds:.2f}s"


class _Meter:
    """A rich progress bar (files and bytes), or nothing when not on a terminal."""

    def __init__(self, plan: SyncPlan, enabled: bool, console: Console) -> None:
        self._progress: Progress | None = None
        self._files: TaskID | None = None
        self._bytes: TaskID | None = None
        if enabled and plan.uploads:
            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TimeRemainingColumn(),
                console=console,
                transient=True,
            )
            self._files = self._progress.add_task("files", total=len(plan.uploads))
            self._bytes = self._progress.add_task("bytes", total=plan.upload_bytes)

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        if self._progress is None:
            yield
            return
        with self._progress:
            yield

    def add_bytes(self, count: int) -> None:
        if self._progress is not None and self._bytes is not None:
            self._progress.advance(self._bytes, count)

    def file_done(self) -> None:
        if self._progress is not None and self._files is not None:
            self._progress.advance(self._files, 1)


class Uploader:
    """Applies one plan to one store. Not reusable: make one per sync."""

    def __init__(
        self,
        store: ObjectStore,
        plan: SyncPlan,
        options: TransferOptions | None = None,
        *,
        records: UploadRecords | None = None,
        console: Console | None = None,
    ) -> None:
        self.store = store
        self.plan = plan
        self.options = options or TransferOptions()
        self.records = records or UploadRecords()
        self.console = console or Console(stderr=True)
        self.bucket = plan.dest.bucket
        self.result = SyncResult(skipped=len(plan.skipped))
        self._lock = threading.Lock()
        self._started: list[MultipartUpload] = []  # created by this run, not yet completed
        show = self.options.progress
        self._meter = _Meter(plan, self.console.is_terminal if show is None else show, self.console)

    def _retry(self, call: Callable[[], ObjectInfo]) -> ObjectInfo:
        return with_retries(call, attempts=self.options.attempts)

    def run(self) -> SyncResult:
        began = time.perf_counter()
        small = [u for u in self.plan.uploads if u.file.size < self.options.multipart_threshold]
        large = [u for u in self.plan.uploads if u.file.size >= self.options.multipart_threshold]
        try:
            with self._meter.running():
                run_all(self._upload_small, small, self.options.jobs, "majob-put")
                for upload in large:
                    self._upload_large(upload)
            self._delete_extraneous()
            self.result.aborted_uploads += self._abort_stale()
        except MajobError:
            self._abort_started()
            raise
        finally:
            self.result.seconds = time.perf_counter() - began
        return self.result

    # -- small files ------------------------------------------------------------------------
    def _upload_small(self, upload: PlannedUpload) -> None:
        file = upload.file
        content_md5 = _b64(file.md5)
        info = self._retry(
            lambda: self.store.put_file(self.bucket, upload.key, file.path, content_md5=content_md5)
        )
        got = md5_of(info)
        if got is not None and got != file.md5:
            raise StorageIntegrityError(
                f"uploaded object has MD5 {got}, the local file {file.rel} has {file.md5}",
                bucket=self.bucket,
                key=upload.key,
            )
        self._done(upload)

    def _done(self, upload: PlannedUpload) -> None:
        with self._lock:
            self.result.uploaded += 1
            self.result.uploaded_bytes += upload.file.size
        if upload.file.size < self.options.multipart_threshold:
            self._meter.add_bytes(upload.file.size)
        self._meter.file_done()

    # -- large files ------------------------------------------------------------------------
    def _upload_large(self, upload: PlannedUpload) -> None:
        file = upload.file
        part_size = self.options.part_size_for(file.size)
        count = max(1, math.ceil(file.size / part_size))
        mpu, have = self._resume_or_create(upload, part_size, count)
        todo = [n for n in range(1, count + 1) if n not in have]
        with self._lock:
            self.result.resumed_parts += len(have)
        self._meter.add_bytes(sum(p.size for p in have.values()))

        def send(number: int) -> UploadedPart:
            offset = (number - 1) * part_size
            size = min(part_size, file.size - offset)
            part = with_retries(
                lambda: self.store.upload_part(self.bucket, mpu, number, file.path, offset, size),
                attempts=self.options.attempts,
            )
            if part.size not in (0, size):
                raise StorageIntegrityError(
                    f"part {number} of {file.rel} was stored with {part.size} bytes, not {size}",
                    bucket=self.bucket,
                    key=upload.key,
                )
            self._meter.add_bytes(size)
            return UploadedPart(number, part.etag, size)

        for part in run_all(send, todo, self.options.jobs, "majob-part"):
            have[part.number] = part
        parts = [have[n] for n in range(1, count + 1)]
        info = self._complete(upload, mpu, parts)
        with self._lock:
            self._started = [m for m in self._started if m.upload_id != mpu.upload_id]
        self.records.drop(self.bucket, upload.key, mpu.upload_id)
        self._verify_large(upload, info, parts)
        self._done(upload)

    def _complete(
        self, upload: PlannedUpload, mpu: MultipartUpload, parts: Sequence[UploadedPart]
    ) -> ObjectInfo:
        """Complete the upload. If the answer to an earlier attempt was lost (the connection
        dropped after OBS completed it), the retry finds no upload: the object is then checked
        by its ETag, which only these parts make."""
        try:
            return self._retry(lambda: self.store.complete_multipart(self.bucket, mpu, parts))
        except StorageNotFound:
            stored = self.store.head(self.bucket, upload.key)
            if stored is None or stored.etag != multipart_etag(parts):
                raise
            return stored

    def _resume_or_create(
        self, upload: PlannedUpload, part_size: int, count: int
    ) -> tuple[MultipartUpload, dict[int, UploadedPart]]:
        file = upload.file
        record = self.records.find(self.bucket, upload.key)
        if record is not None:
            mpu = MultipartUpload(upload.key, record.upload_id)
            same = (record.size, record.md5, record.part_size) == (file.size, file.md5, part_size)
            alive = same and any(
                m.upload_id == record.upload_id
                for m in self.store.list_multipart_uploads(self.bucket, upload.key)
            )
            if alive:
                have = {}
                for part in self.store.list_parts(self.bucket, mpu):
                    expected = min(part_size, file.size - (part.number - 1) * part_size)
                    if 1 <= part.number <= count and part.size == expected:
                        have[part.number] = UploadedPart(part.number, part.etag, part.size)
                return mpu, have
            if not same:
                with contextlib.suppress(StorageError):
                    self.store.abort_multipart(self.bucket, mpu)
            self.records.drop(self.bucket, upload.key, record.upload_id)
        mpu = self._retry_mpu(
            lambda: self.store.create_multipart(
                self.bucket, upload.key, metadata={MD5_METADATA: file.md5}
            )
        )
        with self._lock:
            self._started.append(mpu)
        self.records.put(
            UploadRecord(self.bucket, upload.key, mpu.upload_id, file.size, file.md5, part_size)
        )
        return mpu, {}

    def _retry_mpu(self, call: Callable[[], MultipartUpload]) -> MultipartUpload:
        return with_retries(call, attempts=self.options.attempts)

    def _verify_large(
        self, upload: PlannedUpload, info: ObjectInfo, parts: Sequence[UploadedPart]
    ) -> None:
        """The completed object's ETag must be the MD5 of the part MD5s the server computed as
        the parts arrived, and the stored object must have the file's size and carry its MD5
        (read back by HEAD)."""
        expected_etag = multipart_etag(parts)
        if "-" in info.etag and info.etag != expected_etag:
            raise StorageIntegrityError(
                f"{upload.file.rel}: the completed object's ETag {info.etag} is not the one its "
                f"parts make ({expected_etag})",
                bucket=self.bucket,
                key=upload.key,
            )
        stored = with_retries(
            lambda: self.store.head(self.bucket, upload.key), attempts=self.options.attempts
        )
        md5 = md5_of(stored) if stored is not None else None
        if stored is None or stored.size != upload.file.size or md5 != upload.file.md5:
            raise StorageIntegrityError(
                f"{upload.file.rel} was stored as {stored.size if stored else 'nothing'} bytes "
                f"with MD5 {md5}, expected {upload.file.size} bytes with MD5 {upload.file.md5}",
                bucket=self.bucket,
                key=upload.key,
            )
        changed = _changed_since_plan(upload)
        if changed:
            raise StorageIntegrityError(
                f"{upload.file.rel} changed while it was uploaded; sync again",
                bucket=self.bucket,
                key=upload.key,
            )

    # -- deletes and clean-up ---------------------------------------------------------------
    def _delete_extraneous(self) -> None:
        keys = [o.key for o in self.plan.deletes]
        for start in range(0, len(keys), DELETE_BATCH):
            batch = keys[start : start + DELETE_BATCH]
            with_retries(
                lambda b=batch: self.store.delete_many(self.bucket, b),  # type: ignore[misc]
                attempts=self.options.attempts,
            )
            self.result.deleted += len(batch)

    def _abort_stale(self) -> int:
        """Abort multipart uploads under the prefix that no run will finish (killed runs)."""
        aborted = 0
        stale = with_retries(
            lambda: self.store.list_multipart_uploads(self.bucket, self.plan.dest.key),
            attempts=self.options.attempts,
        )
        for mpu in stale:
            with contextlib.suppress(StorageError):
                self.store.abort_multipart(self.bucket, mpu)
                aborted += 1
            self.records.drop(self.bucket, mpu.key, mpu.upload_id)
        return aborted

    def _abort_started(self) -> None:
        with self._lock:
            started, self._started = self._started, []
        for mpu in started:
            with contextlib.suppress(MajobError, OSError):
                self.store.abort_multipart(self.bucket, mpu)
                self.records.drop(self.bucket, mpu.key, mpu.upload_id)


def _changed_since_plan(upload: PlannedUpload) -> bool:
    try:
        stat = os.stat(upload.file.path)
    except OSError:
        return True
    if stat.st_size != upload.file.size:
        return True
    return bool(upload.file.mtime_ns) and stat.st_mtime_ns != upload.file.mtime_ns


def multipart_etag(parts: Sequence[UploadedPart]) -> str:
    """``md5(md5(part 1) || md5(part 2) ...)-N``: the ETag OBS gives a multipart object."""
    digest = hashlib.md5(b"".join(bytes.fromhex(p.etag) for p in parts))
    return f"{digest.hexdigest()}-{len(parts)}"


def _b64(hex_md5: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_md5)).decode("ascii")


def apply_plan(
    store: ObjectStore,
    plan: SyncPlan,
    options: TransferOptions | None = None,
    *,
    records: UploadRecords | None = None,
    console: Console | None = None,
) -> SyncResult:
    """Carry out ``plan`` against ``store``; see the module docstring for the guarantees."""
    return Uploader(store, plan, options, records=records, console=console).run()
