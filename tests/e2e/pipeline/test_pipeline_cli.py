"""``majob pipeline`` and ``majob history`` through the CLI against the emulated cloud."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from majob.pipeline.ledger import Ledger
from majob.storage.obs import ObsObjectStore

runner = CliRunner()


def pipeline(*args: str):
    return runner.invoke(app, ["pipeline", "tiny.yaml", "--profile", "emulator", *args])


def test_three_stages_pass_and_an_unchanged_rerun_runs_nothing(
    project: Path, cloud: EmulatedCloud, store: ObsObjectStore
) -> None:
    result = pipeline("--upload-inputs")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "[majob] local: runs (has not passed yet)"
    assert "[worker-0] epoch 2 loss=0.25" in lines
    assert "[majob] local: passed" in result.output
    assert "[majob] debug: runs (follows the stage before it)" in lines
    assert "[majob] phase: Completed" in lines
    # Each cloud stage lists its own folder of the output, and only that.
    assert "[majob] train_url in OBS: obs://majob-demo/tiny/out/debug/model.pth (3 bytes)" in lines
    assert "[majob] train_url in OBS: obs://majob-demo/tiny/out/formal/model.pth (4 bytes)" in lines
    assert len([line for line in lines if "train_url in OBS" in line]) == 2
    assert lines[-1] == "[majob] pipeline passed: local, debug and formal"
    assert store.get_bytes("majob-demo", "tiny/out/formal/model.pth") == b"0.25"
    assert store.get_bytes("majob-demo", "tiny/out/debug/model.pth") == b"1.0"  # one epoch
    assert (project / "out" / "model.pth").read_text() == "0.25"

    with Ledger() as ledger:
        records = ledger.records("tiny")
    assert [(r.stage, r.result) for r in records] == [
        ("formal", "passed"),
        ("debug", "passed"),
        ("local", "passed"),
    ]
    assert records[1].metrics == {"worker-0": {"loss": [1.0]}}  # debug: one epoch
    assert records[0].job_id and records[0].outputs == ("train_url/model.pth",)

    again = pipeline()
    assert again.exit_code == 0, again.output
    ids = f"local #{records[2].id}, debug #{records[1].id}, formal #{records[0].id}"
    assert again.output.splitlines() == [
        f"[majob] local: skipped, passed for this code and spec (#{records[2].id})",
        f"[majob] debug: skipped, passed for this code and spec (#{records[1].id})",
        f"[majob] formal: skipped, passed for this code and spec (#{records[0].id})",
        f"[majob] nothing to run: local, debug and formal passed for this code and spec ({ids}); "
        "change the code or spec to run again",
    ]

    history = runner.invoke(app, ["history", "tiny.yaml"])
    assert history.exit_code == 0, history.output
    assert history.output.count("passed") == 3
    assert records[0].job_id[:8] in history.output
    assert "loss 0.25" in history.output and "loss 1" in history.output


def test_a_one_line_code_change_after_debug_refuses_formal_naming_the_file(
    project: Path, cloud: EmulatedCloud
) -> None:
    assert pipeline("--until", "debug", "--upload-inputs").exit_code == 0
    with (project / "code" / "train.py").open("a") as script:
        script.write("print('one more line')\n")
    refused = pipeline("--from", "formal")
    assert refused.exit_code == 2
    assert refused.output.splitlines()[0].startswith(
        "error: formal refused for tiny: the debug stage passed (record #2) for other code or "
        "spec; changed since: code: train.py (changed)"
    )
    assert "--force --reason" in refused.output
    with Ledger() as ledger:
        assert len(ledger.records("tiny")) == 2  # nothing ran, nothing was recorded


def test_a_spec_change_refuses_formal_naming_the_field(project: Path, cloud: EmulatedCloud) -> None:
    assert pipeline("--until", "debug", "--upload-inputs").exit_code == 0
    refused = pipeline("--from", "formal", "--set", "hyperparameters.lr=0.5")
    assert refused.exit_code == 2
    warned, error = refused.output.splitlines()[:2]
    assert warned.startswith("warning: --set hyperparameters.lr=0.5: no add_argument")  # true
    assert error == (
        "error: formal refused for tiny: the debug stage passed (record #2) for other code or "
        "spec; changed since: spec: hyperparameters.lr"
    )
    # A stage override is not a spec change: the gate stays open.
    opened = pipeline("--from", "formal", "--set", "stages.debug.timeout=5m")
    assert opened.exit_code == 0, opened.output
    assert "[majob] formal: runs" in opened.output


def test_force_with_a_reason_runs_the_stage_and_records_the_override(
    project: Path, cloud: EmulatedCloud
) -> None:
    no_reason = pipeline("--from", "debug", "--force")
    assert no_reason.exit_code == 2
    assert "--force needs --reason" in no_reason.output
    forced = pipeline(
        "--from", "debug", "--until", "debug", "--force", "--reason", "local has no data here",
        "--upload-inputs",
    )  # fmt: skip
    assert forced.exit_code == 0, forced.output
    assert forced.output.splitlines()[0] == (
        "[majob] debug: gate overridden (the local stage has not passed for tiny yet); "
        "reason: local has no data here"
    )
    with Ledger() as ledger:
        (debug,) = ledger.records("tiny")
    assert debug.passed and debug.override == "local has no data here"
    history = runner.invoke(app, ["history"])
    assert "passed (forced)" in history.output
    assert f"#{debug.id} debug forced: local has no data here" in history.output


def test_a_failing_expect_stops_the_pipeline_naming_the_check_and_the_value(
    project: Path, cloud: EmulatedCloud
) -> None:
    spec = project / "tiny.yaml"
    spec.write_text(spec.read_text().replace("'< 1.5'", "'< 0.1'"))
    result = pipeline()
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        "[majob] pipeline stopped: the local stage failed: expect.metrics.loss: loss < 0.1 "
        "failed: the last value on worker-0 is 0.25"
    )
    assert "debug" not in result.output
    with Ledger() as ledger:
        (local,) = ledger.records("tiny")
    assert local.result == "failed" and local.reason.startswith("expect.metrics.loss")


def test_a_failing_cloud_job_stops_the_pipeline_with_its_task_and_last_lines(
    project: Path, cloud: EmulatedCloud
) -> None:
    result = pipeline("--upload-inputs", "--set", "stages.debug.hyperparameters.fail=3")
    assert result.exit_code == 1
    last = result.output.splitlines()[-1]
    assert last.startswith("[majob] pipeline stopped: the debug stage failed: job ")
    assert "ended Failed: worker-0 exited with code 3; last lines:" in last
    assert "epoch 0 loss=1.0" in last


def test_history_of_an_empty_ledger_and_bad_options(project: Path) -> None:
    empty = runner.invoke(app, ["history"])
    assert empty.exit_code == 0
    assert empty.output.startswith("no stage has run yet (")
    bad = runner.invoke(app, ["pipeline", "tiny.yaml", "--until", "prod"])
    assert bad.exit_code == 2
    assert bad.output.strip() == "error: --until 'prod': choose local, debug or formal"
    backwards = runner.invoke(
        app, ["pipeline", "tiny.yaml", "--from", "formal", "--until", "local"]
    )
    assert backwards.output.strip() == "error: --from formal comes after --until local"


def test_a_cloud_stage_past_its_timeout_is_stopped_and_fails(
    project: Path, cloud: EmulatedCloud
) -> None:
    result = pipeline(
        "--upload-inputs", "--until", "debug",
        "--set", "stages.debug.timeout=1s", "--set", "stages.debug.hyperparameters.sleep=60",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    last = result.output.splitlines()[-1]
    assert last.startswith("[majob] pipeline stopped: the debug stage failed: the debug stage ")
    assert "passed its timeout of 1s; job " in last and "was stopped (Terminat" in last
