"""Pure pieces of the apply step: part sizes, the multipart ETag, the result line."""

from __future__ import annotations

import hashlib
from pathlib import Path

from majob.emulator.obs.models import multipart_etag as server_multipart_etag
from majob.storage.base import UploadedPart
from majob.storage.localstate import file_multipart_etag
from majob.storage.transfer import MIN_PART_SIZE, SyncResult, TransferOptions, multipart_etag

MiB = 1 << 20


def test_part_size_respects_obs_limits() -> None:
    options = TransferOptions(part_size=16 * MiB)
    assert options.part_size_for(100 * MiB) == 16 * MiB
    # 10,000 parts at most: a 500 GiB file needs parts of at least 50 MiB + change.
    huge = 500 * 1024 * MiB
    assert options.part_size_for(huge) * 10_000 >= huge
    assert TransferOptions(part_size=1).part_size_for(10 * MiB) == MIN_PART_SIZE


# S3's (and OBS's) multipart ETag: md5 of the parts' binary MD5s one after the other, "-" and
# the part count. The expected value was computed apart from majob, with coreutils:
#   (for f in p1 p2 p3; do md5sum $f | cut -d' ' -f1 | xxd -r -p; done) | md5sum
# where p1 = 200,000 x "a", p2 = 200,000 x "b", p3 = "tail".
CHUNKS = [b"a" * 200_000, b"b" * 200_000, b"tail"]
KNOWN_ETAG = "6b249434e7d793411a9aeb9d7cde27e4-3"


def test_multipart_etag_is_the_known_value() -> None:
    parts = [UploadedPart(i + 1, hashlib.md5(c).hexdigest(), len(c)) for i, c in enumerate(CHUNKS)]
    assert parts[0].etag == "561b1994f6baacd6e5eaf4baaa12849f"  # md5sum of p1
    assert multipart_etag(parts) == KNOWN_ETAG
    # The fake OBS computes the same (its own test pins it to a known value too).
    assert server_multipart_etag(hashlib.md5(c).digest() for c in CHUNKS) == KNOWN_ETAG


def test_a_files_multipart_etag_is_the_known_value(tmp_path: Path) -> None:
    path = tmp_path / "weights.bin"
    path.write_bytes(b"".join(CHUNKS))
    assert file_multipart_etag(path, 200_000) == KNOWN_ETAG


def test_summary_line() -> None:
    result = SyncResult(uploaded=3, uploaded_bytes=2 * MiB, skipped=5, seconds=2.0)
    result.resumed_parts, result.aborted_uploads = 4, 1
    assert result.summary_line() == (
        "uploaded 3 files (2.0 MiB, 1.0 MiB/s), skipped 5, deleted 0, resumed 4 parts, "
        "aborted 1 stale upload in 2.00s"
    )


def test_default_jobs_follow_the_latency_seen() -> None:
    from types import SimpleNamespace

    from majob.storage.transfer import NEAR_JOBS, REMOTE_JOBS, default_jobs

    assert default_jobs(SimpleNamespace(fastest_request=None)) == REMOTE_JOBS  # nothing seen yet
    assert default_jobs(SimpleNamespace(fastest_request=0.001)) == NEAR_JOBS
    assert default_jobs(SimpleNamespace(fastest_request=0.020)) == REMOTE_JOBS
    assert default_jobs(object()) == REMOTE_JOBS


def test_a_far_looking_listing_is_checked_by_a_probe_when_many_files_are_to_go() -> None:
    from types import SimpleNamespace

    from majob.storage.transfer import NEAR_JOBS, REMOTE_JOBS, default_jobs

    asked: list[str] = []

    def store(after_probe: float) -> SimpleNamespace:
        def probe(bucket: str) -> float:
            asked.append(bucket)
            return after_probe

        return SimpleNamespace(fastest_request=0.020, probe_latency=probe)

    # A busy machine made the listing slow; the two small requests answer at once: near.
    assert default_jobs(store(0.001), "b", files=200) == NEAR_JOBS
    assert default_jobs(store(0.021), "b", files=200) == REMOTE_JOBS  # far indeed
    assert asked == ["b", "b"]
    # A few files: their count, not the latency, bounds the threads; nothing is asked.
    assert default_jobs(store(0.001), "b", files=NEAR_JOBS) == REMOTE_JOBS
    near = SimpleNamespace(fastest_request=0.001, probe_latency=None)
    assert default_jobs(near, "b", files=200) == NEAR_JOBS
    assert asked == ["b", "b"]
