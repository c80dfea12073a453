"""``majob obs sync --dry-run`` lists the files it would move (all of them with -v)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.storage.obs import ObsObjectStore
from majob.testing import FAKE_BUCKET

runner = CliRunner()
PREFIX = f"obs://{FAKE_BUCKET}/jobs/listing/"


def test_dry_run_lists_a_head_of_the_files_and_verbose_lists_all(
    tmp_path: Path, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for i in range(25):
        (src / f"f{i:02d}.py").write_text("x" * i)
    dry = runner.invoke(app, ["obs", "sync", str(src), PREFIX, "--dry-run"])
    assert dry.exit_code == 0, dry.output
    lines = dry.stdout.splitlines()
    assert lines[1] == "  upload      25 files        300 B  (25 new, 0 changed)"
    listed = [ln for ln in lines if ln.startswith("  upload (new)")]
    assert listed[0] == "  upload (new)            0 B  f00.py"
    assert len(listed) == 20
    assert "  ... and 5 more files (-v lists them all)" in lines
    assert lines[-1] == "dry run: nothing uploaded or deleted"

    verbose = runner.invoke(app, ["obs", "sync", str(src), PREFIX, "--dry-run", "-v"])
    listed = [ln for ln in verbose.stdout.splitlines() if ln.startswith("  upload (new)")]
    assert [ln.rsplit(" ", 1)[1] for ln in listed] == [f"f{i:02d}.py" for i in range(25)]
    assert "more file" not in verbose.stdout
    assert list(obs_store.list_all(FAKE_BUCKET, "jobs/listing/")) == []

    done = runner.invoke(app, ["obs", "sync", str(src), PREFIX])  # a real sync: counts only
    assert done.exit_code == 0, done.output
    assert "upload (new)" not in done.stdout
    assert "uploaded 25 files" in done.stdout
    (src / "f01.py").write_text("changed")
    (src / "f02.py").unlink()
    again = runner.invoke(app, ["obs", "sync", str(src), PREFIX, "--dry-run", "--delete"])
    assert again.stdout.splitlines()[1:4] == [
        "  upload       1 file           7 B  (0 new, 1 changed)",
        "  skip        23 files        297 B  (unchanged)",
        "  delete       1 object         2 B  (not in source)",
    ]
    assert again.stdout.splitlines()[4:6] == [
        "  upload (changed)        7 B  f01.py",
        "  delete                  2 B  f02.py",
    ]
