"""What a new user meets first: the profile in use named in a configuration error (and the
running emulator offered), ``majob obs mb`` and the pre-flight pointing at it, and the emulator
profile making the spec's buckets on ``--upload-inputs`` (a spec from ``majob init`` names a
bucket no emulator has). The real clients (esdk-obs-python, huaweicloudsdkmodelarts) talk to
the emulator."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from majob.storage.obs import ObsObjectStore

runner = CliRunner()


@pytest.fixture
def no_credentials(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK", "MAJOB_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path / "no-config"))


def _errors(stderr: str) -> list[str]:
    """The error lines: submit warns first that the engine (Python 3.7) does not match here."""
    return [line for line in stderr.splitlines() if not line.startswith("warning: the engine")]


def _on_bucket(project: Path, bucket: str) -> Path:
    spec = project / "spec.yaml"
    spec.write_text(spec.read_text().replace("majob-demo", bucket))
    return spec


@pytest.mark.usefixtures("no_credentials")
def test_without_profile_the_error_names_it_and_offers_the_running_emulator(
    project: Path, cloud: EmulatedCloud
) -> None:
    for args in (
        ["submit", str(project / "spec.yaml")],
        ["validate", "--online", str(project / "spec.yaml")],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, result.output
        lines = _errors(result.stderr)
        assert lines[0] == (
            "error: no OBS credentials found (profile 'default', used because no --profile "
            "was given)"
        )
        assert lines[1].startswith("error: hint: set HUAWEICLOUD_SDK_AK and HUAWEICLOUD_SDK_SK")
        assert lines[1].endswith(
            "; or an emulator is running here: pass --profile emulator to use it"
        )


@pytest.mark.usefixtures("no_credentials")
def test_a_chosen_profile_is_named_and_no_emulator_offered(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAJOB_EMULATOR_DIR", str(tmp_path / "no-emulator"))
    config = tmp_path / "config"
    config.mkdir()
    (config / "profiles.yaml").write_text("work:\n  region: cn-north-4\n  project_id: abc\n")
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(config))
    result = runner.invoke(app, ["submit", str(project / "spec.yaml"), "--profile", "work"])
    assert result.exit_code == 2, result.output
    assert _errors(result.stderr)[0] == "error: no OBS credentials found (profile 'work')"
    assert "--profile emulator" not in result.stderr


def test_obs_mb_makes_a_bucket(cloud: EmulatedCloud, store: ObsObjectStore) -> None:
    made = runner.invoke(app, ["obs", "mb", "obs://fresh-bucket", "--profile", "emulator"])
    assert made.exit_code == 0, made.output
    assert made.output == "made bucket obs://fresh-bucket\n"
    store.put_bytes("fresh-bucket", "a.txt", b"x")
    cloud.obs.log.clear()
    again = runner.invoke(app, ["obs", "mb", "fresh-bucket", "--profile", "emulator"])
    assert again.exit_code == 0, again.output
    assert again.output == "bucket obs://fresh-bucket is yours already\n"
    # Asked, not created again: real OBS answers its owner's second create with 200, which
    # would read as "made" (the fake answers 409 BucketAlreadyOwnedByYou, as S3 does).
    assert [e.method for e in cloud.obs.log.entries()] == ["HEAD"]
    bad = runner.invoke(app, ["obs", "mb", "obs://No_Such", "--profile", "emulator"])
    assert bad.exit_code == 2
    assert bad.stderr.startswith("error: obs://No_Such: bucket name 'No_Such' may hold only")
    path = runner.invoke(app, ["obs", "mb", "obs://fresh-bucket/dir/", "--profile", "emulator"])
    assert path.exit_code == 2
    assert "give a bucket, not a path" in path.stderr


def test_preflight_says_how_to_make_a_missing_bucket(project: Path, cloud: EmulatedCloud) -> None:
    spec = _on_bucket(project, "my-bucket")
    result = runner.invoke(app, ["submit", str(spec), "--profile", "emulator"])
    assert result.exit_code == 2, result.output
    assert (
        "inputs[0] data_url: bucket 'my-bucket' does not exist; make it with "
        "`majob obs mb obs://my-bucket --profile emulator`"
    ) in result.output
    assert (
        "outputs train_url: bucket 'my-bucket' does not exist; make it with "
        "`majob obs mb obs://my-bucket --profile emulator`"
    ) in result.output


def test_upload_inputs_on_the_emulator_makes_the_specs_buckets(
    project: Path, cloud: EmulatedCloud, store: ObsObjectStore
) -> None:
    spec = _on_bucket(project, "my-bucket")
    result = runner.invoke(
        app, ["submit", str(spec), "--profile", "emulator", "--upload-inputs", "--wait"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("made bucket obs://my-bucket on the emulator") == 1
    assert (
        store.get_bytes("my-bucket", "tiny/out/debug/out.txt") == b"PAYLOAD"
    )  # the debug stage's own folder
