"""The stage copy engine against the fake OBS through the real client: copy, skip, resume after
SIGKILL, a source that changes while it is copied, a file changed on the volume, bad endpoints."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from majob.data.manifest import JOURNAL_NAME, MANIFEST_NAME, read_journal, read_manifest
from majob.data.stage_copy import list_source, stage_tree
from majob.errors import DataStageError, StorageUnreachable
from majob.storage.obs import ObsObjectStore
from majob.storage.uri import ObsUri
from majob.testing import FAKE_BUCKET, obs_config

SRC = ObsUri(FAKE_BUCKET, "data/set/")


def _fill(store: ObsObjectStore, count: int) -> dict[str, bytes]:
    files = {f"part-{i:03d}/f{i}.bin": os.urandom(100 + i) for i in range(count)}
    for rel, data in files.items():
        store.put_bytes(FAKE_BUCKET, SRC.key + rel, data)
    store.put_bytes(FAKE_BUCKET, "data/setx/sibling", b"not below the folder")
    return files


def test_stage_copies_verifies_and_skips_an_unchanged_source(
    obs_store: ObsObjectStore, tmp_path: Path
) -> None:
    files = _fill(obs_store, 12)
    dest = tmp_path / "vol" / "set"
    report = stage_tree(obs_store, SRC, dest, jobs=4)
    assert (report.files, report.copied, report.skipped) == (12, 12, False)
    assert {rel: (dest / rel).read_bytes() for rel in files} == files
    manifest = read_manifest(dest)
    assert manifest is not None and manifest.state == "complete"
    assert manifest.source == SRC.uri and set(manifest.files) == set(files)
    assert not (dest / JOURNAL_NAME).exists()
    again = stage_tree(obs_store, SRC, dest, full_verify=True)
    assert again.skipped and again.copied == 0 and again.kept == 12


def test_a_file_changed_on_the_volume_is_copied_again(
    obs_store: ObsObjectStore, tmp_path: Path
) -> None:
    files = _fill(obs_store, 5)
    dest = tmp_path / "set"
    stage_tree(obs_store, SRC, dest)
    (dest / "part-002/f2.bin").write_bytes(b"edited on the share")
    report = stage_tree(obs_store, SRC, dest)
    assert not report.skipped and report.copied == 1
    assert (dest / "part-002/f2.bin").read_bytes() == files["part-002/f2.bin"]


def test_a_source_that_changes_while_staged_leaves_the_manifest_stale(
    obs_store: ObsObjectStore, tmp_path: Path
) -> None:
    _fill(obs_store, 4)
    dest = tmp_path / "set"

    def meddle(_staged: object) -> None:
        obs_store.put_bytes(FAKE_BUCKET, SRC.key + "late.bin", b"arrived during the copy")

    with pytest.raises(DataStageError, match="changed while it was staged") as caught:
        stage_tree(obs_store, SRC, dest, jobs=1, on_file=meddle)
    assert "added: data/set/late.bin" in caught.value.message
    manifest = read_manifest(dest)
    assert manifest is not None and manifest.state == "stale"
    assert manifest.changes == ["added: data/set/late.bin"]
    # Once the source is stable, the next stage copies what is new and completes.
    report = stage_tree(obs_store, SRC, dest)
    assert report.copied == 1 and read_manifest(dest).state == "complete"  # type: ignore[union-attr]


KILLER = """
import os, signal, sys
from pathlib import Path
from majob.data.stage_copy import list_source, stage_tree
from majob.storage.obs import open_store
from majob.storage.uri import ObsUri
done = []
def on_file(staged):
    done.append(staged)
    if len(done) == 4:
        os.kill(os.getpid(), signal.SIGKILL)
with open_store() as store:
    stage_tree(store, ObsUri.parse(sys.argv[1]), Path(sys.argv[2]), jobs=1, on_file=on_file)
"""


def test_a_stage_killed_half_way_resumes_and_verifies(
    obs_store: ObsObjectStore, obs_env: dict[str, str], tmp_path: Path
) -> None:
    files = _fill(obs_store, 10)
    dest = tmp_path / "set"
    killed = subprocess.run(
        [sys.executable, "-c", KILLER, SRC.uri, str(dest)], env={**os.environ, **obs_env}
    )
    assert killed.returncode == -9
    manifest = read_manifest(dest)
    assert manifest is not None and manifest.state == "incomplete"
    landed = read_journal(dest)
    assert len(landed) == 4
    report = stage_tree(obs_store, SRC, dest, full_verify=True)
    assert (report.copied, report.kept) == (6, 4)
    assert {rel: (dest / rel).read_bytes() for rel in files} == files
    record = json.loads((dest / MANIFEST_NAME).read_text())
    assert record["state"] == "complete" and len(record["files"]) == 10
    # The killed run's temporary file, if any, is never presented as staged data.
    assert all(rel in files for rel in record_rels(record))


def record_rels(record: dict[str, list[dict[str, str]]]) -> list[str]:
    return [entry["rel"] for entry in record["files"]]


def test_an_unreachable_obs_is_one_clear_error(tmp_path: Path) -> None:
    store = ObsObjectStore(obs_config("http://127.0.0.1:9", retries=0, timeout=2.0))
    with pytest.raises(StorageUnreachable):
        stage_tree(store, SRC, tmp_path / "set")
    assert not (tmp_path / "set" / MANIFEST_NAME).exists()


def test_the_process_prints_progress_and_the_summary(
    obs_store: ObsObjectStore, obs_env: dict[str, str], tmp_path: Path
) -> None:
    _fill(obs_store, 3)
    run = subprocess.run(
        [sys.executable, "-m", "majob.data.stage_main", SRC.uri, str(tmp_path / "set")],
        env={**os.environ, **obs_env},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "majob-stage: files=3/3" in run.stdout
    assert "staged obs://majob-test/data/set/" in run.stdout
    assert obs_env["HUAWEICLOUD_SDK_SK"] not in run.stdout + run.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "majob.data.stage_main", "s3://x/y", str(tmp_path / "other")],
        env={**os.environ, **obs_env},
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("error: ")


FILLER = """
import json, sys
from pathlib import Path
from majob.data.manifest import read_manifest
from majob.data.stage_copy import list_source, stage_tree
from majob.errors import DataStageError
from majob.storage.obs import open_store
from majob.storage.uri import ObsUri
dest = Path(sys.argv[2])
with open_store() as store:
    try:
        stage_tree(store, ObsUri.parse(sys.argv[1]), dest, jobs=2)
    except DataStageError as error:
        manifest = read_manifest(dest)
        print(json.dumps({"error": error.message, "state": manifest and manifest.state}))
"""


def _small_volume(tmp_path: Path) -> Path | None:
    """A 64 KiB tmpfs in a mount namespace of its own (``unshare -rm``), where the kernel
    itself answers ENOSPC; None where this machine allows no such namespace."""
    volume = tmp_path / "small-volume"
    volume.mkdir()
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {volume}"],
        capture_output=True,
    )
    return volume if probe.returncode == 0 else None


def test_a_full_volume_is_one_clear_error_and_the_manifest_says_incomplete(
    obs_store: ObsObjectStore, obs_env: dict[str, str], tmp_path: Path
) -> None:
    volume = _small_volume(tmp_path) if shutil.which("unshare") else None
    if volume is None:
        pytest.skip("no mount namespace here (unshare -rm) for a small tmpfs")
    for i in range(8):
        obs_store.put_bytes(FAKE_BUCKET, f"{SRC.key}f{i}.bin", os.urandom(20_000))
    script = f'mount -t tmpfs -o size=64k tmpfs {volume} && exec "$@"'
    args = [SRC.uri, str(volume / "set")]
    run = subprocess.run(
        ["unshare", "-rm", "sh", "-c", script, "sh", sys.executable, "-c", FILLER, *args],
        env={**os.environ, **obs_env},
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    outcome = json.loads(run.stdout)
    assert "is full" in outcome["error"] and "the stage is incomplete" in outcome["error"]
    assert outcome["state"] == "incomplete"


def test_the_manifest_round_trips_and_the_journal_is_one_line_a_file(
    obs_store: ObsObjectStore, tmp_path: Path
) -> None:
    _fill(obs_store, 3)
    dest = tmp_path / "set"
    stage_tree(obs_store, SRC, dest)
    text = (dest / MANIFEST_NAME).read_text()
    manifest = read_manifest(dest)
    assert manifest is not None and json.loads(text)["format"] == 1
    assert manifest.to_json() == text  # written as it reads back
    assert len(text.splitlines()) == 2 + len(manifest.files)  # head, a line a file, the end


def test_a_listing_made_just_before_is_copied_from_and_still_checked(
    obs_store: ObsObjectStore, tmp_path: Path
) -> None:
    files = _fill(obs_store, 3)
    dest = tmp_path / "set"
    dest.mkdir()
    listed = list_source(obs_store, SRC, dest)
    obs_store.put_bytes(FAKE_BUCKET, SRC.key + "after-the-listing.bin", b"new")
    with pytest.raises(DataStageError, match=r"added: data/set/after-the-listing\.bin"):
        stage_tree(obs_store, SRC, dest, listed=listed)
    report = stage_tree(obs_store, SRC, dest)
    assert report.copied == 1 and report.files == len(files) + 1


def _stage_main(
    obs_env: dict[str, str], dest: Path, *more: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "majob.data.stage_main", SRC.uri, str(dest), *more],
        env={**os.environ, **obs_env},
        capture_output=True,
        text=True,
    )


def test_a_file_the_full_verify_finds_corrupt_is_copied_again_by_the_next_run(
    obs_store: ObsObjectStore, obs_env: dict[str, str], tmp_path: Path
) -> None:
    files = _fill(obs_store, 4)
    dest = tmp_path / "set"
    assert _stage_main(obs_env, dest).returncode == 0
    # One byte changed on the share, its size and mtime as they were: only a re-hash sees it.
    bad = dest / "part-001/f1.bin"
    stat = bad.stat()
    bad.write_bytes(bytes([files["part-001/f1.bin"][0] ^ 1]) + files["part-001/f1.bin"][1:])
    os.utime(bad, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    failed = _stage_main(obs_env, dest, "--verify-full")
    assert failed.returncode != 0
    assert "checksum differs: part-001/f1.bin" in failed.stderr
    assert "run the same stage again: it copies the files that failed" in failed.stderr
    manifest = read_manifest(dest)
    assert manifest is not None and manifest.state == "incomplete"
    assert "part-001/f1.bin" not in manifest.files  # nothing says the bad copy is staged
    assert "part-001/f1.bin" not in read_journal(dest)
    # What the hint says: the next run (a quick verify) copies that file again, and only it.
    again = _stage_main(obs_env, dest)
    assert again.returncode == 0, again.stderr
    assert "copied 1 " in again.stdout and "kept 3" in again.stdout
    assert bad.read_bytes() == files["part-001/f1.bin"]
    assert _stage_main(obs_env, dest, "--verify-full").returncode == 0
    assert read_manifest(dest).state == "complete"  # type: ignore[union-attr]


def test_a_single_gets_temporary_file_of_a_killed_process_goes_and_a_live_ones_stays(
    obs_store: ObsObjectStore, tmp_path: Path
) -> None:
    _fill(obs_store, 3)
    dest = tmp_path / "vol" / "set"
    stage_tree(obs_store, SRC, dest)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    dead = dest / "part-001" / f".f1.bin.majob-{gone.stdout.strip()}-7"  # killed mid-GET
    live = dest / "part-001" / f".f1.bin.majob-{os.getppid()}-0"  # another process's, running
    mine = dest / "part-001" / f".f1.bin.majob-{os.getpid()}-3"
    for path in (dead, live, mine):
        path.write_bytes(b"half a file")
    obs_store.put_bytes(FAKE_BUCKET, SRC.key + "new.txt", b"a change, so the stage runs")
    report = stage_tree(obs_store, SRC, dest)
    assert not dead.exists() and live.exists() and mine.exists()
    assert report.extra == sorted(str(p.relative_to(dest)) for p in (live, mine))
