"""What a sync says it will do: counts with the right noun, the per-file listing, the meter."""

from __future__ import annotations

import hashlib
from pathlib import Path

from rich.progress import Progress

from majob.storage.base import ObjectInfo
from majob.storage.plan import LocalFile, SyncPlan, plan_sync
from majob.storage.progress import _row_columns
from majob.storage.uri import ObsUri

DEST = ObsUri.parse("obs://bkt/jobs/code/")


def _local(rel: str, data: bytes) -> LocalFile:
    return LocalFile(rel, Path("/nowhere") / rel, len(data), hashlib.md5(data).hexdigest())


def _plan(count: int, *, delete: bool = False) -> SyncPlan:
    local = [_local(f"f{i:02d}.py", b"x" * (i + 1)) for i in range(count)]
    same = hashlib.md5(b"x").hexdigest()
    remote = [ObjectInfo("jobs/code/f00.py", 1, f'"{same}"'), ObjectInfo("jobs/code/old.py", 9, "")]
    return plan_sync(Path("/src"), local, DEST, remote, delete=delete)


def test_one_of_a_kind_is_singular() -> None:
    lines = _plan(2).summary_lines()
    assert lines[1:] == [
        "  upload       1 file           2 B  (1 new, 0 changed)",
        "  skip         1 file           1 B  (unchanged)",
        "  keep         1 object         9 B  (not in source; --delete)",
    ]


def test_every_planned_file_is_listed_with_its_action_changes_first() -> None:
    assert _plan(3, delete=True).file_lines() == [
        "  upload (new)            2 B  f01.py",
        "  upload (new)            3 B  f02.py",
        "  delete                  9 B  old.py",
        "  skip (unchanged)        1 B  f00.py",
    ]
    assert _plan(2).file_lines()[1] == "  keep (--delete)         9 B  old.py"


def test_a_long_listing_shows_a_head_and_counts_the_rest() -> None:
    plan = _plan(30)
    head = plan.file_lines(20)
    assert head[:20] == plan.file_lines()[:20]
    assert head[20:] == ["  ... and 11 more files (-v lists them all)"]
    assert len(plan.file_lines()) == 31
    assert plan.file_lines(31) == plan.file_lines()


def test_the_file_row_of_the_meter_counts_files_not_bytes() -> None:
    amount, speed = _row_columns()
    with Progress(amount, speed, auto_refresh=False, disable=True) as progress:
        files = progress.add_task("files", total=3, unit="files")
        data = progress.add_task("bytes", total=4096, unit="bytes")
        progress.advance(files, 1)
        progress.advance(data, 2048)
        by_id = {task.id: task for task in progress.tasks}
        assert amount.render(by_id[files]).plain == "1/3 files"
        assert speed.render(by_id[files]).plain == ""
        assert amount.render(by_id[data]).plain == "2.0/4.0 KiB"
