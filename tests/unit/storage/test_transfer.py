"""Pure pieces of the apply step: part sizes, the multipart ETag, the result line."""

from __future__ import annotations

import hashlib

from majob.emulator.obs.models import multipart_etag as server_multipart_etag
from majob.storage.base import UploadedPart
from majob.storage.transfer import MIN_PART_SIZE, SyncResult, TransferOptions, multipart_etag

MiB = 1 << 20


def test_part_size_respects_obs_limits() -> None:
    options = TransferOptions(part_size=16 * MiB)
    assert options.part_size_for(100 * MiB) == 16 * MiB
    # 10,000 parts at most: a 500 GiB file needs parts of at least 50 MiB + change.
    huge = 500 * 1024 * MiB
    assert options.part_size_for(huge) * 10_000 >= huge
    assert TransferOptions(part_size=1).part_size_for(10 * MiB) == MIN_PART_SIZE


def test_multipart_etag_matches_what_the_server_computes() -> None:
    chunks = [b"a" * 200_000, b"b" * 200_000, b"tail"]
    digests = [hashlib.md5(c).digest() for c in chunks]
    parts = [UploadedPart(i + 1, hashlib.md5(c).hexdigest(), len(c)) for i, c in enumerate(chunks)]
    assert multipart_etag(parts) == server_multipart_etag(digests)
    assert multipart_etag(parts).endswith("-3")


def test_summary_line() -> None:
    result = SyncResult(uploaded=3, uploaded_bytes=2 * MiB, skipped=5, seconds=2.0)
    result.resumed_parts, result.aborted_uploads = 4, 1
    assert result.summary_line() == (
        "uploaded 3 files (2.0 MiB, 1.0 MiB/s), skipped 5, deleted 0, resumed 4 parts, "
        "aborted 1 stale upload in 2.00s"
    )
