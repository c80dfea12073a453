"""``majob submit`` and the job commands against the emulated cloud, through the CLI."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from majob.pipeline.ledger import Ledger
from majob.service.base import JobFilter
from majob.service.connect import ServiceSource
from majob.service.watch import wait_for
from majob.spec.profiles import load_profile
from majob.testing import wait_until

runner = CliRunner()
DEADLINE = 60.0


def submit(project: Path, *args: str):
    return runner.invoke(
        app,
        ["submit", str(project / "spec.yaml"), "--profile", "emulator", "--upload-inputs", *args],
    )


@pytest.fixture(params=["rest", "notebook"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The REST client, or the notebook SDK inside a notebook: the same tests hold for both."""
    if request.param == "notebook":
        request.getfixturevalue("notebook")
        monkeypatch.setenv("MAJOB_BACKEND", "notebook")
    return str(request.param)


def job_id_of(output: str) -> str:
    line = next(line for line in output.splitlines() if line.startswith("submitted job "))
    return line.split()[2]


def test_submit_wait_trains_and_uploads_the_output(project: Path, service, store) -> None:
    result = submit(project, "--wait")
    assert result.exit_code == 0, result.output
    assert "code: 1 of 1 file sent to obs://majob-demo/tiny/code/" in result.output
    assert "[worker-0] step 2" in result.output
    assert "[worker-0] done" in result.output
    assert "phase: Completed" in result.output
    completed, recorded = result.stdout.splitlines()[-2:]
    assert completed.startswith("job ") and "(tiny-debug) Completed in" in completed
    assert recorded.startswith("[majob] debug passed: ledger record #1")
    assert (
        store.get_bytes("majob-demo", "tiny/out/debug/out.txt") == b"PAYLOAD"
    )  # the debug stage's own folder
    job_id = job_id_of(result.output)

    status = runner.invoke(app, ["status", "tiny-debug", "--profile", "emulator"])
    assert status.exit_code == 0, status.output
    assert f"job {job_id} (tiny-debug)" in status.output
    assert "phase:    Completed" in status.output
    assert "task worker-0: exit 0" in status.output

    logs = runner.invoke(app, ["logs", job_id, "--profile", "emulator"])
    assert logs.exit_code == 0, logs.output
    assert "[worker-0] done" in logs.output.splitlines()
    one = runner.invoke(app, ["logs", job_id, "--task", "worker-0", "--profile", "emulator"])
    assert "done" in one.output.splitlines()
    assert not any(line.startswith("[worker-0]") for line in one.output.splitlines())

    listed = runner.invoke(app, ["list", "--profile", "emulator", "--phase", "Completed"])
    assert job_id in listed.output and "tiny-debug" in listed.output

    # The ended job holds its name (ModelArts.2751 until it is deleted): the next submit of the
    # stage is numbered, not refused, and the old job keeps its logs.
    second = submit(project)  # unchanged code: nothing to send
    assert second.exit_code == 0, second.output
    assert "code: 0 of 1 file sent" in second.output, second.output
    assert "note: job name 'tiny-debug' is held by an ended job; this job is 'tiny-debug-2'" in (
        second.output
    )
    second_id = job_id_of(second.output)
    assert f"submitted job {second_id} (tiny-debug-2)" in second.output
    deleted = runner.invoke(app, ["delete", job_id, "--profile", "emulator"])
    assert deleted.exit_code == 0, deleted.output
    assert f"deleted job {job_id} (tiny-debug)" in deleted.output


def test_a_failing_job_names_its_task_and_last_lines(
    backend: str, project: Path, cloud: EmulatedCloud
) -> None:
    result = submit(project, "--wait", "--set", "hyperparameters.fail=3")
    assert result.exit_code == 1, result.output
    assert "error: task worker-0 exited with code 3" in result.output
    assert "  about to fail" in result.output


@pytest.mark.parametrize(
    "fault",
    [{"status": 429, "code": "ModelArts.0002"}, {"status": 503}, {"reset": True}],
    ids=["429", "503", "dropped"],
)
def test_a_troubled_create_makes_exactly_one_job(
    backend: str,
    project: Path,
    cloud: EmulatedCloud,
    service,
    fault: dict[str, object],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A dropped create may still land; the emulator's never does: look for it only briefly.
    monkeypatch.setenv("MAJOB_MODELARTS_CREATE_WAIT", "0.5")
    cloud.modelarts.add_fault(method="POST", path=r"/training-jobs$", count=1, **fault)
    result = submit(project)
    assert result.exit_code == 0, result.output
    jobs, total = service.search(JobFilter(name="tiny-debug"))
    assert total == 1 and [j.id for j in jobs] == [job_id_of(result.output)]


def test_a_create_carried_out_whose_answer_was_lost_is_found_not_sent_again(
    project: Path, cloud: EmulatedCloud, service, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The service makes the job, then the connection drops before the answer: the submit must
    # find that job by its submit id (sending it again would be refused 2751, or make two).
    monkeypatch.setenv("MAJOB_MODELARTS_CREATE_WAIT", "5")
    lost = cloud.modelarts.add_fault(
        method="POST", path=r"/training-jobs$", count=1, lose_answer=True
    )
    result = submit(project)
    assert result.exit_code == 0, result.output
    assert lost.fired == 1
    creates = [
        c
        for c in cloud.modelarts.log.entries()
        if c.method == "POST" and c.path.endswith("/training-jobs")
    ]
    assert [(c.status, c.fault) for c in creates] == [(201, "lose_answer")]
    jobs, total = service.search(JobFilter(name="tiny-debug"))
    assert total == 1 and [j.id for j in jobs] == [job_id_of(result.output)]
    assert f"the create landed: job {jobs[0].id}" in result.output
    assert "no job with this submit id appeared" not in result.output


def test_preflight_reports_every_problem_and_sends_nothing(project: Path, service, store) -> None:
    (project / "code" / ".majobignore").write_text("train.py\n")
    result = runner.invoke(
        app,
        [
            "submit",
            str(project / "spec.yaml"),
            "--profile",
            "emulator",
            "--set",
            "image.engine=Pytorch",
            "--set",
            "resources.flavor=modelarts.vm.cpu.9u",
        ],
    )
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert any("code.boot_file: 'train.py' is not in the uploaded code" in line for line in lines)
    assert any("did you mean 'PyTorch'?" in line for line in lines)
    assert any(
        "'modelarts.vm.cpu.9u' is not a flavor of this service (ModelArts.2763); "
        "did you mean 'modelarts.vm.cpu.8u'?" in line
        for line in lines
    )
    assert any(
        "inputs[0] data_url: obs://majob-demo/tiny/data/ holds no data; pass --upload-inputs"
        in line
        for line in lines
    )
    assert lines[-1] == "error: nothing was uploaded or created"
    assert service.search()[1] == 0
    assert list(store.list_all("majob-demo", "tiny/")) == []


def test_a_taken_name_names_the_running_job(project: Path, service) -> None:
    first = submit(project, "--set", "hyperparameters.sleep=60")
    assert first.exit_code == 0, first.output
    running = job_id_of(first.output)
    wait_until(lambda: service.get(running).phase == "Running", "Running")
    second = submit(project, "--set", "hyperparameters.sleep=60")
    assert second.exit_code == 2
    assert f"job name 'tiny-debug' is taken by job {running} (Running)" in second.output
    stopped = runner.invoke(app, ["stop", "tiny-debug", "--profile", "emulator"])
    assert stopped.exit_code == 0, stopped.output
    assert f"stopping job {running} (tiny-debug)" in stopped.output


def test_validate_online_runs_the_checks_without_submitting(project: Path, service) -> None:
    result = runner.invoke(
        app,
        ["validate", str(project / "spec.yaml"), "--online", "--profile", "emulator"],
    )
    assert result.exit_code == 2
    assert "holds no data" in result.output
    assert service.search()[1] == 0


def test_polling_resumes_after_the_emulator_restarts(
    project: Path, cloud: EmulatedCloud, service
) -> None:
    result = submit(project, "--set", "hyperparameters.sleep=60")
    assert result.exit_code == 0, result.output
    job_id = job_id_of(result.output)
    wait_until(lambda: service.get(job_id).phase == "Running", "Running")
    source = ServiceSource(load_profile("emulator"))
    notes: list[str] = []
    outcome: dict[str, object] = {}

    def waiter() -> None:
        outcome["result"] = wait_for(
            source, job_id, on_connection=notes.append, reconnect=source.reconnect
        )

    thread = threading.Thread(target=waiter)
    thread.start()
    cloud.stop()  # the daemon dies with the job running
    wait_until(lambda: notes, "the waiter to see the connection drop")
    with EmulatedCloud(cloud.state_dir, buckets=("majob-demo",)):
        thread.join(DEADLINE)
        source.close()
    assert not thread.is_alive()
    final = outcome["result"].job  # type: ignore[attr-defined]
    assert final.phase == "Abnormal"
    assert notes[0].startswith("connection lost") and notes[-1] == "connection back"


def test_a_create_answered_after_the_client_gave_up_is_found_not_sent_again(
    project: Path, cloud: EmulatedCloud, service, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every create is answered only after the client's time-out: the first one is still in
    # flight when the client gives up on it, and lands later.
    monkeypatch.setenv("MAJOB_MODELARTS_TIMEOUT", "1")
    slow = cloud.modelarts.add_fault(method="POST", path=r"/training-jobs$", latency=3)
    result = submit(project)
    assert result.exit_code == 0, result.output
    assert slow.fired == 1, f"{slow.fired} creates were sent:\n{result.output}"
    assert "no job was made" not in result.output
    assert "may still land" in result.output
    jobs, total = service.search(JobFilter(name="tiny-debug"))
    assert total == 1 and [j.id for j in jobs] == [job_id_of(result.output)]


def test_a_wrong_secret_key_is_one_line_and_exit_2(
    project: Path, cloud: EmulatedCloud, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "wrong-secret-key-5f0c9a1e77d2"
    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config" / "profiles.yaml").write_text(
        "mine:\n"
        "  region: cn-north-4\n"
        f"  project_id: '{cloud.endpoints.project_id}'\n"
        f"  modelarts_endpoint: {cloud.endpoints.modelarts}\n"
        f"  obs_endpoint: {cloud.endpoints.obs}\n"
    )
    monkeypatch.setenv("HUAWEICLOUD_SDK_AK", cloud.endpoints.access_key)
    monkeypatch.setenv("HUAWEICLOUD_SDK_SK", wrong)
    result = runner.invoke(app, ["submit", str(project / "spec.yaml"), "--profile", "mine"])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    warning, *lines = result.stderr.splitlines()
    assert warning.startswith("warning: the engine PyTorch pytorch_1.8.0")  # Python 3.7 there
    assert lines == [
        "error: ModelArts refused the credentials (APIGW.0301): check the access key and secret "
        "key (HUAWEICLOUD_SDK_AK / HUAWEICLOUD_SDK_SK or the credentials file); nothing was "
        "uploaded or created (profile 'mine')"
    ]


def test_a_missing_boot_file_and_an_input_of_only_a_folder_marker_are_reported_together(
    project: Path, service, store
) -> None:
    (project / "code" / "train.py").unlink()
    (project / "code" / "other.py").write_text("print('not the boot file')\n")
    store.put_bytes("majob-demo", "tiny/data/", b"")  # what a console's "create folder" leaves
    result = runner.invoke(app, ["submit", str(project / "spec.yaml"), "--profile", "emulator"])
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert any("code.boot_file: 'train.py' is not in the uploaded code" in line for line in lines)
    assert any(
        "inputs[0] data_url: obs://majob-demo/tiny/data/ holds no data" in line for line in lines
    )
    assert lines[-1] == "error: nothing was uploaded or created"
    assert service.search()[1] == 0

    dry = runner.invoke(
        app, ["submit", str(project / "spec.yaml"), "--profile", "emulator", "--dry-run"]
    )
    assert dry.exit_code == 0, dry.output
    assert "problem: code.boot_file: 'train.py' is not in the uploaded code" in dry.output


def test_a_name_taken_at_create_says_code_status_and_request_id_once(
    project: Path, cloud: EmulatedCloud
) -> None:
    # Taken between the pre-flight and the create: ModelArts refuses the create with 2751.
    cloud.modelarts.add_fault(
        method="POST", path=r"/training-jobs$", count=1, status=400, code="ModelArts.2751"
    )
    result = submit(project)
    assert result.exit_code == 1, result.output
    error = next(line for line in result.output.splitlines() if line.startswith("error: "))
    assert error.startswith("error: ModelArts.2751: job name 'tiny-debug' is taken (")
    for part in ("ModelArts.2751", "status=400", "request_id="):
        assert error.count(part) == 1, error
    assert "error: hint: see `majob list --name tiny-debug`" in result.output


def test_logs_follow_ends_with_the_final_phase_and_its_exit_code(
    project: Path, cloud: EmulatedCloud
) -> None:
    failing = submit(project, "--set", "hyperparameters.fail=3")
    assert failing.exit_code == 0, failing.output
    job_id = job_id_of(failing.output)
    followed = runner.invoke(app, ["logs", job_id, "--follow", "--profile", "emulator"])
    assert followed.exit_code == 1, followed.output
    assert "[worker-0] about to fail" in followed.stdout
    assert followed.stderr.splitlines() == [
        f"error: job {job_id} (tiny-debug) ended Failed: task worker-0 exited with code 3"
    ]

    completing = submit(project, "--set", "name=tiny2")
    assert completing.exit_code == 0, completing.output
    job_id = job_id_of(completing.output)
    followed = runner.invoke(app, ["logs", job_id, "--follow", "--profile", "emulator"])
    assert followed.exit_code == 0, followed.output
    assert "[worker-0] done" in followed.stdout.splitlines()
    assert followed.stderr.startswith(f"job {job_id} (tiny2-debug) Completed in ")


def test_wait_names_the_job_and_how_to_follow_it_when_the_service_stays_away(
    project: Path, cloud: EmulatedCloud, service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAJOB_WAIT_PATIENCE", "1")

    def stop_once_running() -> None:
        def running() -> list[str]:
            jobs, _ = service.search(JobFilter(name="tiny-debug"))
            return [job.id for job in jobs if job.phase == "Running"]

        wait_until(running, "the job to run")
        cloud.stop()  # gone for good: nothing starts it again

    stopper = threading.Thread(target=stop_once_running)
    stopper.start()
    result = submit(project, "--wait", "--set", "hyperparameters.sleep=60")
    stopper.join(DEADLINE)
    assert result.exit_code == 1, result.output
    job_id = job_id_of(result.output)
    warning, *lines = result.stderr.splitlines()
    assert warning.startswith("warning: the engine PyTorch pytorch_1.8.0")  # Python 3.7 there
    assert lines[0].startswith(
        f"error: gave up waiting for job {job_id} (tiny-debug): ModelArts could not be reached "
        "for 1s ("
    )
    assert lines[1:] == [
        "  it may still be running; when the service is back:",
        f"  status:    majob status {job_id} --profile emulator",
        f"  follow it: majob logs {job_id} --follow --profile emulator",
    ]
    with Ledger() as ledger:  # the stage is recorded as a wait cut short, as by Ctrl-C
        assert [r.result for r in ledger.records("tiny")] == ["interrupted"]


def test_a_dry_run_masks_the_body_as_compile_does(
    project: Path, cloud: EmulatedCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "tok-3b9d7e21c4a05f68"
    monkeypatch.setenv("TOKEN", token)
    spec = project / "spec.yaml"
    spec.write_text(
        spec.read_text().replace("{sleep: 0}", "{sleep: 0, token: '${TOKEN}'}")
        + "env: {API_TOKEN: 'Bearer ${TOKEN}'}\n"
    )
    dry = runner.invoke(app, ["submit", str(spec), "--profile", "emulator", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert token not in dry.output
    body = json.loads(dry.stdout[dry.stdout.index("\n{") :])
    assert {"name": "token", "value": "***"} in body["algorithm"]["parameters"]
    assert body["algorithm"]["environments"] == {"API_TOKEN": "Bearer ***"}
    compiled = runner.invoke(app, ["compile", str(spec), "--stage", "debug"])
    assert compiled.exit_code == 0, compiled.output
    shown = json.loads(compiled.stdout)
    assert shown["algorithm"] == {
        key: value for key, value in body["algorithm"].items() if key in shown["algorithm"]
    }


def test_one_submit_walks_the_code_once_and_records_the_files_it_uploaded(
    project: Path, store, monkeypatch: pytest.MonkeyPatch
) -> None:
    import majob.storage.plan as plan_module

    walked: list[Path] = []
    walk = plan_module.walk_files

    def counting(root: Path, *args, **kwargs):
        walked.append(Path(root))
        return walk(root, *args, **kwargs)

    monkeypatch.setattr(plan_module, "walk_files", counting)
    result = submit(project, "--wait")
    assert result.exit_code == 0, result.output
    code = (project / "code").resolve()
    assert [root for root in walked if root == code] == [code]  # the data dir is walked too
    with Ledger() as ledger:
        (record,) = ledger.records("tiny")
    uploaded = [
        info.key.removeprefix("tiny/code/") for info in store.list_all("majob-demo", "tiny/code/")
    ]
    assert sorted(record.code_files) == sorted(uploaded)


def test_a_name_an_active_job_holds_is_refused_before_anything_is_sent(
    project: Path, service
) -> None:
    first = submit(project, "--set", "hyperparameters.sleep=60")
    assert first.exit_code == 0, first.output
    running = job_id_of(first.output)
    try:
        again = submit(project)
        assert again.exit_code == 2, again.output
        assert f"job name 'tiny-debug' is taken by job {running}" in again.output
        assert f"stop it first (majob stop {running}" in again.output
        assert "submitted job" not in again.output and "code:" not in again.output
    finally:
        service.terminate(running)
