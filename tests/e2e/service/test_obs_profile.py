"""``majob obs ... --profile emulator``: the job's outputs are read where the job wrote them,
with no MAJOB_OBS_* settings (the profile names the endpoint and the keys)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app

runner = CliRunner()


def test_the_outputs_of_a_job_are_listed_and_fetched_through_the_profile(
    project: Path, service, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("MAJOB_OBS_ENDPOINT", "MAJOB_OBS_REGION", "MAJOB_OBS_CREDENTIALS"):
        monkeypatch.delenv(name, raising=False)
    spec = str(project / "spec.yaml")
    submitted = runner.invoke(
        app, ["submit", spec, "--profile", "emulator", "--upload-inputs", "--wait"]
    )
    assert submitted.exit_code == 0, submitted.output

    listed = runner.invoke(
        app, ["obs", "ls", "obs://majob-demo/tiny/out/debug/", "-r", "--profile", "emulator"]
    )
    assert listed.exit_code == 0, listed.output
    assert listed.output.split() == ["7", "tiny/out/debug/out.txt"]

    target = tmp_path / "fetched.txt"
    fetched = runner.invoke(
        app,
        [
            "obs",
            "cp",
            "obs://majob-demo/tiny/out/debug/out.txt",
            str(target),
            "--profile",
            "emulator",
        ],
    )
    assert fetched.exit_code == 0, fetched.output
    assert target.read_text() == "PAYLOAD"


def test_an_unknown_profile_is_one_clear_error(
    service, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path / "config"))
    result = runner.invoke(app, ["obs", "ls", "obs://majob-demo/", "--profile", "nope"])
    assert result.exit_code == 2
    assert result.output.startswith("error: ")
    assert "nope" in result.output and "Traceback" not in result.output
