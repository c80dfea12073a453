"""Job commands without a cloud: dry runs, stage and flag errors, configuration errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
MNIST = ROOT / "job_specs" / "mnist.yaml"
runner = CliRunner()


@pytest.fixture(autouse=True)
def no_cloud(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No profile, no keys: nothing here may reach a cloud."""
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(tmp_path / "cache"))
    for name in (
        "HUAWEICLOUD_SDK_AK",
        "HUAWEICLOUD_SDK_SK",
        "MAJOB_OBS_CREDENTIALS",
        "MAJOB_PROFILE",
        "MAJOB_MODELARTS_ENDPOINT",
    ):
        monkeypatch.delenv(name, raising=False)


def test_dry_run_prints_the_files_and_the_exact_body() -> None:
    result = runner.invoke(app, ["submit", str(MNIST), "--dry-run", "--upload-inputs"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()  # stderr: the engine's check-env warning
    assert (
        lines[0] == "dry run: nothing is uploaded or created (debug stage, job mnist-digits-debug)"
    )
    assert "  train.py (" in result.output
    assert "input data_url: " in result.output
    start = lines.index("body (POST /v2/{project_id}/training-jobs):")
    body = json.loads("\n".join(lines[start + 1 :]))
    assert body["metadata"]["name"] == "mnist-digits-debug"
    assert len(body["metadata"]["annotations"]["majob/submit-id"]) == 32
    assert body["algorithm"]["parameters"][0] == {"name": "epochs", "value": "1"}


def test_the_submit_id_is_stable_and_follows_the_stage() -> None:
    def sid(*args: str) -> str:
        result = runner.invoke(app, ["submit", str(MNIST), "--dry-run", *args])
        assert result.exit_code == 0, result.output
        marker = "body (POST /v2/{project_id}/training-jobs):\n"
        text = result.stdout[result.stdout.index(marker) + len(marker) :]
        return str(json.loads(text)["metadata"]["annotations"]["majob/submit-id"])

    assert sid() == sid()
    assert sid() != sid("--stage", "formal")
    assert sid() != sid("--set", "hyperparameters.lr=0.02")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stage", "local"], "error: the local stage runs on this machine, not on ModelArts"),
        (["--stage", "prod"], "error: --stage 'prod': choose debug or formal"),
    ],
)
def test_bad_stages(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["submit", str(MNIST), *args])
    assert result.exit_code == 2
    assert message in result.output


def test_a_profile_without_a_region_is_one_clear_line() -> None:
    result = runner.invoke(app, ["status", "some-job"])
    assert result.exit_code == 2
    assert result.output.splitlines()[0] == (
        "error: profile 'default' names no region and no ModelArts endpoint"
    )


def test_a_profile_without_a_project_id(tmp_path: Path) -> None:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "profiles.yaml").write_text("default: {region: cn-north-4}\n")
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 2
    assert "error: profile 'default' has no project_id" in result.output


def test_list_refuses_an_unknown_phase() -> None:
    result = runner.invoke(app, ["list", "--phase", "Done"])
    assert result.exit_code == 2
    assert "error: --phase 'Done': choose one of Creating, Pending, Running" in result.output


def test_a_dry_run_warns_about_a_set_the_stage_overrides() -> None:
    result = runner.invoke(
        app, ["submit", str(MNIST), "--dry-run", "--set", "hyperparameters.epochs=4"]
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(
        "warning: --set hyperparameters.epochs=4: the debug stage runs with "
        "stages.debug.hyperparameters.epochs=1"
    )
    formal = ["--stage", "formal", "--set", "hyperparameters.epochs=4"]
    said = runner.invoke(app, ["submit", str(MNIST), "--dry-run", *formal]).stderr
    # The formal stage takes the --set: no warning of it (this machine's engine may still differ)
    assert "--set" not in said and all(line.startswith("warning: the engine ") for line in
                                       said.splitlines())  # fmt: skip
