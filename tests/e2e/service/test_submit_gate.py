"""``majob submit --stage formal`` passes the pipeline's gate: debug must have passed for the
same code and spec (in a pipeline or in ``majob submit --stage debug --wait``), or ``--force
--reason`` says why. Real clients, the emulated cloud, the ledger on disk."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.pipeline.ledger import Ledger
from majob.service.base import JobFilter
from majob.service.rest import RestTrainingService

runner = CliRunner()


def submit(project: Path, *args: str):
    return runner.invoke(
        app,
        ["submit", str(project / "spec.yaml"), "--profile", "emulator", "--upload-inputs", *args],
    )


def names_of_jobs(service: RestTrainingService) -> list[str]:
    jobs, _ = service.search(JobFilter())
    return sorted(job.name for job in jobs)


def test_formal_is_refused_before_debug_passed_and_nothing_is_created(
    project: Path, service: RestTrainingService
) -> None:
    result = submit(project, "--stage", "formal")
    assert result.exit_code == 2
    assert "error: formal refused for tiny: the debug stage has not passed for tiny yet" in (
        result.output
    )
    assert "--stage debug --wait" in result.output and "--force --reason" in result.output
    assert names_of_jobs(service) == []


def test_a_debug_submit_that_waits_opens_the_gate_for_this_code_only(
    project: Path, service: RestTrainingService
) -> None:
    debug = submit(project, "--wait")
    assert debug.exit_code == 0, debug.output
    assert "[majob] debug passed: ledger record #1" in debug.output
    [record] = Ledger().records("tiny")
    assert (record.stage, record.result, record.outputs) == (
        "debug",
        "passed",
        ("train_url/out.txt",),
    )
    assert record.job_id

    formal = submit(project, "--stage", "formal", "--wait")
    assert formal.exit_code == 0, formal.output
    assert "[majob] formal passed: ledger record #2" in formal.output

    (project / "code" / "train.py").write_text(
        (project / "code" / "train.py").read_text() + "# changed\n"
    )
    refused = submit(project, "--stage", "formal")
    assert refused.exit_code == 2
    assert "changed since: code: train.py (changed)" in refused.output
    assert names_of_jobs(service) == ["tiny", "tiny-debug"]


def test_a_spec_change_closes_the_gate_and_is_named(
    project: Path, service: RestTrainingService
) -> None:
    assert submit(project, "--wait").exit_code == 0
    refused = submit(project, "--stage", "formal", "--set", "hyperparameters.sleep=1")
    assert refused.exit_code == 2
    assert "spec: hyperparameters.sleep" in refused.output


def test_force_with_a_reason_submits_and_the_ledger_keeps_the_reason(
    project: Path, service: RestTrainingService
) -> None:
    forced = submit(project, "--stage", "formal", "--force", "--reason", "hotfix, debug ran on v1")
    assert forced.exit_code == 0, forced.output
    assert "[majob] formal: gate overridden; reason: hotfix, debug ran on v1" in forced.output
    assert names_of_jobs(service) == ["tiny"]
    history = runner.invoke(app, ["history", str(project / "spec.yaml")])
    assert history.exit_code == 0, history.output
    # A name stays taken while a job of that name exists, ended or not (ModelArts creates a
    # job only when its name does not exist: ValidateTrainingJobName): the next one is numbered.
    [first], _ = service.search(JobFilter(name="tiny"))
    assert first.wait(timeout=120).job.finished
    # Without --wait nothing is judged, so nothing is recorded; with it the reason is kept.
    forced_wait = submit(project, "--stage", "formal", "--force", "--reason", "again", "--wait")
    assert forced_wait.exit_code == 0, forced_wait.output
    assert "this job is 'tiny-2'" in forced_wait.output
    assert sorted(names_of_jobs(service)) == ["tiny", "tiny-2"]
    [record] = Ledger().records("tiny")
    assert (record.stage, record.result, record.override) == ("formal", "passed", "again")


def test_bad_force_flags_are_one_clear_error(project: Path, service: RestTrainingService) -> None:
    cases = [
        (["--stage", "formal", "--force"], "--force needs --reason"),
        (["--stage", "formal", "--reason", "why"], "--reason goes with --force"),
        (["--force", "--reason", "why"], "a debug submit has none to override"),
    ]
    for args, message in cases:
        result = submit(project, *args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output
    assert names_of_jobs(service) == []


def test_a_completed_job_that_fails_its_expect_checks_is_recorded_failed(
    project: Path, service: RestTrainingService
) -> None:
    spec = project / "spec.yaml"
    spec.write_text(spec.read_text() + 'expect:\n  log_contains: ["accuracy"]\n')
    result = submit(project, "--wait")
    assert result.exit_code == 1
    assert "error: the debug stage failed: expect.log_contains: no log line matches 'accuracy'" in (
        result.output
    )
    [record] = Ledger().records("tiny")
    assert (record.stage, record.result) == ("debug", "failed")
    refused = submit(project, "--stage", "formal")
    assert refused.exit_code == 2
    assert "the debug stage has not passed for tiny yet" in refused.output


def test_a_dry_run_of_formal_says_how_the_gate_stands(
    project: Path, service: RestTrainingService
) -> None:
    closed = submit(project, "--stage", "formal", "--dry-run")
    assert closed.exit_code == 0, closed.output
    assert (
        "\nformal gate: closed, a submit would be refused: the debug stage has not passed for "
        "tiny yet\n"
    ) in closed.output
    assert submit(project, "--wait").exit_code == 0
    opened = submit(project, "--stage", "formal", "--dry-run")
    assert "\nformal gate: open (debug passed for this code and spec)\n" in opened.output
    assert names_of_jobs(service) == ["tiny-debug"]
