"""The apply step of a sync: move what the plan says, verify it, leave nothing half-done.

Small files go through a thread pool sharing one store (one client, keep-alive connections); each
PUT carries Content-MD5 and its ETag is checked against the local MD5. Files at or above the
multipart threshold are read once: each part is hashed as it is sent (``PartReader``) and the
ETag the server computed must be that MD5, several parts in flight, into an upload created with
the part size (and the file's MD5, when the hash cache already knew it) as metadata. The
completed object's ETag must be the one the part MD5s make; it is cached, so the next run
compares without reading the file. The upload is recorded locally first, so a run that is
killed resumes it when the same file (key, size, part size) is synced again: a stored part is
reused only when its ETag is the MD5 of the same bytes of the local file. At the end, multipart
uploads left under the prefix are aborted only when this client started them (they are in its
local upload records) or when they were started more than ``stale_upload_age`` seconds ago (48
hours by default): another machine's sync running at the same time keeps its upload. Requests
are retried by the store alone (one rule, ``storage/retry.py``); this module never retries on
top of it. On a storage error the uploads this run started are aborted; an interrupted run
(Ctrl-C) keeps them for the next run to resume.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import math
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from majob.errors import MajobError, StorageError, StorageIntegrityError, StorageNotFound
from majob.storage.base import MultipartUpload, ObjectInfo, ObjectStore, UploadedPart
from majob.storage.jobs import NEAR_JOBS as NEAR_JOBS
from majob.storage.jobs import REMOTE_JOBS as REMOTE_JOBS
from majob.storage.jobs import default_jobs
from majob.storage.localstate import HashCache, UploadRecord, UploadRecords, file_md5, part_md5
from majob.storage.plan import (
    MD5_METADATA,
    PART_SIZE_METADATA,
    PlannedUpload,
    SyncPlan,
    md5_of,
)
from majob.storage.pool import run_all
from majob.storage.progress import SyncMeter
from majob.text import counted, human_bytes, printable

if TYPE_CHECKING:
    from rich.console import Console

MiB = 1 << 20
MIN_PART_SIZE = 100 * 1024  # OBS: every part but the last is at least 100 KiB
MAX_PARTS = 10_000
DELETE_BATCH = 1000
STALE_UPLOAD_AGE = 48 * 3600.0  # seconds: longer than any one file's upload takes


@dataclass(frozen=True)
class TransferOptions:
    """How hard and how: ``jobs`` files (or parts) in flight, when to switch to multipart."""

    # Requests in flight; None: ``default_jobs(store)``, from the latency seen so far.
    jobs: int | None = None
    multipart_threshold: int = 64 * MiB
    part_size: int = 16 * MiB
    # Uploads under the prefix that this client did not start are aborted only when older than
    # this: a concurrent sync from another machine or CI must not lose its upload.
    stale_upload_age: float = STALE_UPLOAD_AGE
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
        hashes: HashCache | None = None,
    ) -> None:
        self.store = store
        self.hashes = hashes
        self.plan = plan
        self.options = options or TransferOptions()
        self.jobs = self.options.jobs or default_jobs(store, plan.dest.bucket, self._requests())
        self.records = records or UploadRecords()
        self.bucket = plan.dest.bucket
        self.result = SyncResult(skipped=len(plan.skipped))
        self._lock = threading.Lock()
        self._started: list[MultipartUpload] = []  # created by this run, not yet completed
        self._meter = SyncMeter(plan, self.options.progress, console)

    def _requests(self) -> int:
        """The PUTs the plan takes: one per small file, one per part of a large one."""
        options = self.options
        return sum(
            1
            if u.file.size < options.multipart_threshold
            else math.ceil(u.file.size / options.part_size_for(u.file.size))
            for u in self.plan.uploads
        )

    def run(self) -> SyncResult:
        began = time.perf_counter()
        small = [u for u in self.plan.uploads if u.file.size < self.options.multipart_threshold]
        large = [u for u in self.plan.uploads if u.file.size >= self.options.multipart_threshold]
        try:
            with self._meter.running():
                run_all(self._upload_small, small, self.jobs, "majob-put")
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
        md5 = file.md5 or file_md5(file.path)
        content_md5 = _b64(md5)
        info = self.store.put_file(self.bucket, upload.key, file.path, content_md5=content_md5)
        got = md5_of(info)
        if got is not None and got != md5:
            raise StorageIntegrityError(
                f"uploaded object has MD5 {got}, the local file {printable(file.rel)} has {md5}",
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
        mpu, stored = self._resume_or_create(upload, part_size, count)

        def send(number: int) -> UploadedPart:
            offset = (number - 1) * part_size
            size = min(part_size, file.size - offset)
            there = stored.get(number)
            if there is not None and there.size == size and self._same_part(upload, there):
                with self._lock:
                    self.result.resumed_parts += 1
                self._meter.add_bytes(size)
                return there
            # Read once, hashed as it is sent; the store checks the server's ETag against it.
            part = self.store.upload_part(self.bucket, mpu, number, file.path, offset, size)
            if part.size not in (0, size):
                raise StorageIntegrityError(
                    f"part {number} of {printable(file.rel)} was stored with {part.size} bytes, "
                    f"not {size}",
                    bucket=self.bucket,
                    key=upload.key,
                )
            self._meter.add_bytes(size)
            return UploadedPart(number, part.etag, size)

        parts = run_all(send, range(1, count + 1), self.jobs, "majob-part")
        info = self._complete(upload, mpu, parts)
        with self._lock:
            self._started = [m for m in self._started if m.upload_id != mpu.upload_id]
        self.records.drop(self.bucket, upload.key, mpu.upload_id)
        self._verify_large(upload, info, parts, part_size)
        self._done(upload)

    def _same_part(self, upload: PlannedUpload, there: UploadedPart) -> bool:
        """Whether the stored part ``there`` holds these bytes of the file (ETag = their MD5)."""
        file = upload.file
        offset = (there.number - 1) * self.options.part_size_for(file.size)
        try:
            md5 = part_md5(file.path, offset, there.size).hex()
        except OSError as error:
            raise StorageIntegrityError(
                f"cannot read {printable(file.rel)} ({error}); it changed or went away while "
                "it was sent; sync again",
                bucket=self.bucket,
                key=upload.key,
            ) from None
        return there.etag == md5

    def _complete(
        self, upload: PlannedUpload, mpu: MultipartUpload, parts: Sequence[UploadedPart]
    ) -> ObjectInfo:
        """Complete the upload. If the answer to an earlier attempt was lost (the connection
        dropped after OBS completed it), the retry finds no upload: the object is then checked
        by its ETag, which only these parts make."""
        try:
            return self.store.complete_multipart(self.bucket, mpu, parts)
        except StorageNotFound:
            stored = self.store.head(self.bucket, upload.key)
            if stored is None or stored.etag != multipart_etag(parts):
                raise
            return stored

    def _resume_or_create(
        self, upload: PlannedUpload, part_size: int, count: int
    ) -> tuple[MultipartUpload, dict[int, UploadedPart]]:
        """The upload to send the parts into, and the parts it already holds (by number)."""
        file = upload.file
        record = self.records.find(self.bucket, upload.key)
        if record is not None:
            mpu = MultipartUpload(upload.key, record.upload_id)
            # The MD5 stored at its start must still be the file's: then it was read there.
            same_md5 = not record.md5 or record.md5 == (file.md5 or file_md5(file.path))
            same = (record.size, record.part_size) == (file.size, part_size) and same_md5
            alive = same and any(
                m.upload_id == record.upload_id
                for m in self.store.list_multipart_uploads(self.bucket, upload.key)
            )
            if alive:
                stored = {
                    part.number: part
                    for part in self.store.list_parts(self.bucket, mpu)
                    if 1 <= part.number <= count
                }
                return mpu, stored
            if not same:
                with contextlib.suppress(StorageError):
                    self.store.abort_multipart(self.bucket, mpu)
            self.records.drop(self.bucket, upload.key, record.upload_id)
        metadata = {PART_SIZE_METADATA: str(part_size)}
        if file.md5 is not None:
            metadata[MD5_METADATA] = file.md5
        mpu = self.store.create_multipart(self.bucket, upload.key, metadata=metadata)
        with self._lock:
            self._started.append(mpu)
        self.records.put(
            UploadRecord(
                self.bucket, upload.key, mpu.upload_id, file.size, file.md5 or "", part_size
            )
        )
        return mpu, {}

    def _verify_large(
        self,
        upload: PlannedUpload,
        info: ObjectInfo,
        parts: Sequence[UploadedPart],
        part_size: int,
    ) -> None:
        """The completed object's ETag must be the MD5 of the part MD5s read from the local
        file, and the stored object (read back by HEAD) must have the file's size and part size
        metadata. Its ETag is then cached as the file's, unless the file changed meanwhile."""
        file = upload.file
        expected_etag = multipart_etag(parts)
        if "-" in info.etag and info.etag != expected_etag:
            raise StorageIntegrityError(
                f"{printable(file.rel)}: the completed object's ETag {info.etag} is not the one "
                f"its parts make ({expected_etag})",
                bucket=self.bucket,
                key=upload.key,
            )
        stored = self.store.head(self.bucket, upload.key)
        md5 = md5_of(stored) if stored is not None else None
        if (
            stored is None
            or stored.size != file.size
            or stored.etag not in (expected_etag, info.etag)
            or (md5 is not None and file.md5 is not None and md5 != file.md5)
        ):
            raise StorageIntegrityError(
                f"{printable(file.rel)} was stored as {stored.size if stored else 'nothing'} bytes "
                f"with ETag {stored.etag if stored else None}, expected {file.size} bytes with "
                f"ETag {expected_etag}",
                bucket=self.bucket,
                key=upload.key,
            )
        try:
            now = os.stat(file.path)
        except OSError:
            now = None
        if (
            now is None
            or now.st_size != file.size
            or (file.mtime_ns and now.st_mtime_ns != file.mtime_ns)
        ):
            raise StorageIntegrityError(
                f"{printable(file.rel)} changed while it was uploaded; sync again",
                bucket=self.bucket,
                key=upload.key,
            )
        if self.hashes is not None:
            self.hashes.remember_multipart_etag(file.rel, now, part_size, expected_etag)

    # -- deletes and clean-up ---------------------------------------------------------------
    def _delete_extraneous(self) -> None:
        keys = [o.key for o in self.plan.deletes]
        for start in range(0, len(keys), DELETE_BATCH):
            batch = keys[start : start + DELETE_BATCH]
            self.store.delete_many(self.bucket, batch)
            self.result.deleted += len(batch)

    def _abort_stale(self) -> int:
        """Abort the multipart uploads under the prefix that no run will finish: the ones this
        client started (killed runs; every file this run needed is complete now) and the ones
        older than the cut-off. Anyone else's recent upload may still be in progress."""
        aborted = 0
        cutoff = time.time() - self.options.stale_upload_age
        for mpu in self.store.list_multipart_uploads(self.bucket, self.plan.dest.key):
            record = self.records.find(self.bucket, mpu.key)
            mine = record is not None and record.upload_id == mpu.upload_id
            old = 0.0 < mpu.initiated < cutoff
            if not (mine or old):
                continue
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
    hashes: HashCache | None = None,
) -> SyncResult:
    """Carry out ``plan`` against ``store``; see the module docstring for the guarantees.
    ``hashes`` learns the multipart ETags of the big files sent."""
    return Uploader(store, plan, options, records=records, console=console, hashes=hashes).run()
