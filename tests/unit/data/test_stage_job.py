"""The transfer job's pieces: the ``sfs://`` target, the shipped code folder (self-contained:
the copy engine runs from it alone) and the progress read from its log."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from majob.data.stage_job import BOOT_FILE, MOUNT, SfsTarget, StageProgress, ship_code
from majob.errors import UserInputError


def test_a_target_names_the_share_folder_and_the_path_in_the_container() -> None:
    target = SfsTarget.parse("sfs://192.168.0.9/datasets/digits/")
    assert target.nfs == "192.168.0.9:/datasets/digits"
    assert target.in_container == f"{MOUNT}/datasets/digits"
    assert target.uri == "sfs://192.168.0.9/datasets/digits"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("sfs://192.168.0.9/", "has no path part"),
        ("sfs://192.168.0.9", "has no path part"),
        ("sfs:///data", "names no server"),
        ("sfs://host/a/../b", "has no path part"),
        ("/mnt/sfs/data", "is not an SFS Turbo folder"),
    ],
)
def test_bad_targets_are_refused(text: str, said: str) -> None:
    with pytest.raises(UserInputError, match=said):
        SfsTarget.parse(text)


def test_the_shipped_code_runs_the_engine_by_itself(tmp_path: Path) -> None:
    folder = ship_code(tmp_path / "code")
    assert (folder / BOOT_FILE).is_file() and not list(folder.rglob("__pycache__"))
    # -I: no PYTHONPATH and no current directory on the path: majob must come from the folder.
    shown = subprocess.run(
        [sys.executable, "-I", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
         "import majob.data.stage_main as m; print(m.__file__)", str(folder)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert shown.stdout.strip().startswith(str(folder))


def test_progress_comes_from_the_engine_lines_and_errors_are_kept() -> None:
    progress = StageProgress()
    assert progress.read("[worker-0] majob-stage: files=1/4 bytes=10/40")
    assert (progress.files, progress.total_bytes) == (1, 40) and not progress.digest
    assert not progress.read("[worker-0] error: the share is full")
    assert progress.errors == ("the share is full",)
    progress.read("[worker-0] staged obs://b/x/ -> /mnt/d: 4 files (40 B); copied 1 (10 B), kept 3")
    assert progress.summary.endswith("copied 1 (10 B), kept 3")
    assert progress.read("majob-stage-done: files=4 bytes=40 digest=" + "0f" * 32)
    assert progress.digest == "0f" * 32 and progress.bytes == 40
