"""A job's code and inputs come from OBS keys anyone with write access chose: a key that climbs
out of its prefix (``code/../../x``) must fail the job, never write outside the job directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.emulator.conftest import Harness
from tests.e2e.emulator.test_modelarts_jobs import create, events


def _climb_to(root: Path, harness: Harness) -> str:
    """A relative path from a job's code directory up to ``root`` (as many ``..`` as it takes)."""
    code_dir = (
        harness.cloud.modelarts.backend.store.job_dir("any") / "ma-user/modelarts/user-job-dir/code"
    )
    return "/".join([".."] * len(code_dir.relative_to(root).parts))


@pytest.mark.parametrize("channel", ["code", "data"])
def test_a_key_that_climbs_out_of_its_prefix_fails_the_job_and_writes_nothing_outside(
    harness: Harness, tmp_path: Path, channel: str
) -> None:
    harness.upload_job()
    climb = _climb_to(tmp_path, harness)
    harness.put(f"jobs/a/{channel}/{climb}/escaped.txt", "written outside the job directory")
    job = harness.wait(create(harness, harness.body("climbs-out")))
    assert job.status.phase == "Failed"
    assert not (tmp_path / "escaped.txt").exists()
    assert not list(tmp_path.rglob("escaped.txt"))
    failure = [m for m in events(harness, job.metadata.id) if m.startswith("the job failed")]
    assert failure and "refusing to download key" in failure[0] and "'..'" in failure[0]
