"""A sync aborts only the multipart uploads it owns (its local records) or old ones: another
machine's sync running at the same time keeps its upload."""

from __future__ import annotations

import time
from pathlib import Path

from majob.emulator.obs import FakeObsServer
from majob.storage.localstate import UploadRecord, UploadRecords
from majob.storage.obs import ObsObjectStore
from majob.storage.sync import sync_dir
from majob.storage.transfer import STALE_UPLOAD_AGE
from majob.storage.uri import ObsUri
from majob.testing import FAKE_BUCKET

DEST = ObsUri(FAKE_BUCKET, "jobs/code/")


def test_only_own_or_old_uploads_are_aborted(
    tmp_path: Path, fake_obs_server: FakeObsServer, obs_store: ObsObjectStore, cache_dir: Path
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text("a\n")
    # Another machine's sync, in progress right now: nothing here knows about it.
    theirs = obs_store.create_multipart(FAKE_BUCKET, "jobs/code/big.bin")
    # One this client started in a run that was killed: recorded in its local state.
    mine = obs_store.create_multipart(FAKE_BUCKET, "jobs/code/gone.bin")
    UploadRecords(cache_dir / "uploads.json").put(
        UploadRecord(FAKE_BUCKET, mine.key, mine.upload_id, 10, "", 1 << 20)
    )
    # One nobody finished, started before the cut-off.
    old = obs_store.create_multipart(FAKE_BUCKET, "jobs/code/old.bin")
    uploads = fake_obs_server.backend.bucket(FAKE_BUCKET).uploads
    uploads[old.upload_id].initiated = time.time() - STALE_UPLOAD_AGE - 3600

    listed = {u.upload_id: u for u in obs_store.list_multipart_uploads(FAKE_BUCKET, "jobs/")}
    assert abs(listed[theirs.upload_id].initiated - time.time()) < 600  # the start time is kept

    _, result = sync_dir(obs_store, src, DEST, cache_dir=cache_dir)
    assert result is not None and result.uploaded == 1 and result.aborted_uploads == 2
    left = [u.upload_id for u in obs_store.list_multipart_uploads(FAKE_BUCKET, "jobs/")]
    assert left == [theirs.upload_id]
    assert UploadRecords(cache_dir / "uploads.json").find(FAKE_BUCKET, mine.key) is None
