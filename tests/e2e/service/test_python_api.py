"""``majob.submit`` and ``majob.jobs``: the Job handle against the emulated cloud."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import majob
from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from majob.spec.profiles import Profile
from majob.testing import wait_until

runner = CliRunner()


def test_submit_wait_logs_refresh_and_jobs(project: Path, profile: Profile, store) -> None:
    reports: list[str] = []
    job = majob.submit(
        project / "spec.yaml",
        stage="debug",
        profile=profile,
        upload_inputs=True,
        report=reports.append,
    )
    assert job.service is not None
    try:
        lines: list[str] = []
        assert job.phase == "Creating"
        result = job.wait(on_line=lines.append)
        assert result.job.succeeded and result.ok
        # The handle itself is refreshed: print(job) and its card no longer say Creating.
        assert result.job is job and job.phase == "Completed" and job.duration_ms > 0
        assert repr(job).startswith("<Job tiny-debug Completed ")
        assert ">Completed</span>" in (job._repr_html_() or "")
        kept = len(result.tail_of("worker-0"))
        assert repr(result) == (
            f"<WaitResult tiny-debug ended Completed, id {job.id}; "
            f"last log lines kept: worker-0 ({kept})>"
        )
        assert "[worker-0] step 1" in lines
        assert result.tail_of("worker-0")[-1].startswith("[ModelArts Service Log]")
        assert "done" in result.tail_of("worker-0")
        assert job.refresh().phase == "Completed"
        assert "[worker-0] done" in list(job.logs())
        assert any(r.startswith("code: 1 of 1 file sent") for r in reports)
        listed = majob.jobs(name="tiny", phase="Completed", profile=profile)
        assert [j.id for j in listed] == [job.id]
        assert "1 job, newest first" in (listed._repr_html_() or "")
    finally:
        job.service.close()
    assert (
        store.get_bytes("majob-demo", "tiny/out/debug/out.txt") == b"PAYLOAD"
    )  # the debug stage's own folder


def test_stop_a_running_job(project: Path, profile: Profile) -> None:
    job = majob.submit(
        project / "spec.yaml",
        profile=profile,
        upload_inputs=True,
        overrides=["hyperparameters.sleep=60"],
    )
    assert job.service is not None
    try:
        wait_until(lambda: job.refresh().phase == "Running", "the job to run")
        job.stop()
        assert job.wait(timeout=60).job.phase == "Terminated"
    finally:
        job.service.close()


def test_the_local_stage_is_not_submitted(project: Path, profile: Profile) -> None:
    with pytest.raises(majob.UserInputError, match="runs on this machine"):
        majob.submit(project / "spec.yaml", stage="local", profile=profile)


def test_wrong_keys_are_one_line_without_the_secret(
    cloud: EmulatedCloud, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "wrong-secret-key-1234567890abcdef"
    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config" / "profiles.yaml").write_text(
        "mine:\n"
        "  region: cn-north-4\n"
        f"  project_id: '{cloud.endpoints.project_id}'\n"
        f"  modelarts_endpoint: {cloud.endpoints.modelarts}\n"
        f"  obs_endpoint: {cloud.endpoints.obs}\n"
    )
    monkeypatch.setenv("HUAWEICLOUD_SDK_AK", cloud.endpoints.access_key)
    monkeypatch.setenv("HUAWEICLOUD_SDK_SK", secret)
    result = runner.invoke(app, ["list", "--profile", "mine"])
    assert result.exit_code == 1
    assert secret not in result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("error: APIGW.0301: list jobs:")
    assert lines[1].startswith("error: hint: ")
    assert len(lines) == 2
