"""``majob submit`` inside a ModelArts notebook (``MAJOB_BACKEND=notebook``): every job call goes
through the notebook SDK (the stand-in of ``standin/``) to the emulated cloud, and meets the
same bad input and faults as the REST path (``test_submit_cli.py``)."""

from __future__ import annotations

import socket
import threading
import traceback
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.compile.rest import to_rest_body
from majob.emulator.cloud import EmulatedCloud
from majob.errors import ServiceError
from majob.service.base import JobFilter
from majob.service.connect import ServiceSource, open_service
from majob.service.notebook import NotebookTrainingService, description_tag
from majob.service.watch import wait_for
from majob.spec.load import load_spec
from majob.spec.profiles import Profile, load_profile
from majob.testing import wait_until

runner = CliRunner()
DEADLINE = 60.0


@pytest.fixture
def in_notebook(notebook: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAJOB_BACKEND", "notebook")


def submit(project: Path, *args: str):
    return runner.invoke(
        app,
        ["submit", str(project / "spec.yaml"), "--profile", "emulator", "--upload-inputs", *args],
    )


def job_id_of(output: str) -> str:
    line = next(line for line in output.splitlines() if line.startswith("submitted job "))
    return line.split()[2]


def test_submit_wait_status_logs_list_delete_go_through_the_sdk(
    in_notebook: None, project: Path, profile: Profile, service, store
) -> None:
    assert isinstance(open_service(profile), NotebookTrainingService)
    result = submit(project, "--wait")
    assert result.exit_code == 0, result.output
    assert "[worker-0] step 2" in result.output and "[worker-0] done" in result.output
    assert "phase: Completed" in result.output
    assert (
        store.get_bytes("majob-demo", "tiny/out/debug/out.txt") == b"PAYLOAD"
    )  # the debug stage's own folder
    job_id = job_id_of(result.output)
    status = runner.invoke(app, ["status", "tiny-debug", "--profile", "emulator"])
    assert status.exit_code == 0, status.output
    assert "phase:    Completed" in status.output and "task worker-0: exit 0" in status.output
    logs = runner.invoke(app, ["logs", job_id, "--profile", "emulator"])
    assert "[worker-0] done" in logs.output.splitlines()
    listed = runner.invoke(app, ["list", "--profile", "emulator", "--phase", "Completed"])
    assert job_id in listed.output
    deleted = runner.invoke(app, ["delete", job_id, "--profile", "emulator"])
    assert deleted.exit_code == 0, deleted.output
    assert service.search()[1] == 0


def test_the_submit_id_is_in_the_description_and_what_is_lost_is_said(
    in_notebook: None, project: Path, profile: Profile
) -> None:
    result = submit(project, "--set", "description=my experiment", "--set", "auto_stop=2h")
    assert result.exit_code == 0, result.output
    assert "note: auto_stop has no Estimator argument" in result.output
    assert "annotation" not in result.output  # the submit id is carried, in the description
    with open_service(profile) as service:
        job = service.get(job_id_of(result.output))
    raw = NotebookTrainingService()._job_object(job.id).get_job_info()
    description = raw["metadata"]["description"]
    assert description.startswith("my experiment [majob/submit-id=")
    assert job.submit_id == description_tag(description)


def test_stop_terminates_a_running_job(in_notebook: None, project: Path, service) -> None:
    first = submit(project, "--set", "hyperparameters.sleep=60")
    assert first.exit_code == 0, first.output
    running = job_id_of(first.output)
    wait_until(lambda: service.get(running).phase == "Running", "Running")
    stopped = runner.invoke(app, ["stop", "tiny-debug", "--profile", "emulator"])
    assert stopped.exit_code == 0, stopped.output
    assert f"stopping job {running} (tiny-debug)" in stopped.output
    wait_until(lambda: service.get(running).phase == "Terminated", "Terminated")


# A failing job and a create the service troubles: tests/e2e/service/test_submit_cli.py runs
# those on both backends.


def test_a_create_answered_after_the_sdk_gave_up_is_found_not_sent_again(
    in_notebook: None,
    project: Path,
    cloud: EmulatedCloud,
    service,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import modelarts._client  # the stand-in: its calls give up after 1 s

    monkeypatch.setattr(modelarts._client, "TIMEOUT", (5.0, 1.0))
    slow = cloud.modelarts.add_fault(method="POST", path=r"/training-jobs$", latency=3)
    result = submit(project)
    assert result.exit_code == 0, result.output
    assert slow.fired == 1, f"{slow.fired} creates were sent:\n{result.output}"
    assert "may still land" in result.output
    jobs, total = service.search(JobFilter(name="tiny-debug"))
    assert total == 1 and [j.id for j in jobs] == [job_id_of(result.output)]


def test_logs_follow_ends_with_the_final_phase_and_its_exit_code(
    in_notebook: None, project: Path
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


def test_polling_resumes_after_the_emulator_restarts(
    in_notebook: None, project: Path, cloud: EmulatedCloud, service
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
    cloud.stop()  # the daemon dies with the job running; it comes back on other ports
    wait_until(lambda: notes, "the waiter to see the connection drop")
    with EmulatedCloud(cloud.state_dir, buckets=("majob-demo",)):
        thread.join(DEADLINE)
        source.close()
    assert not thread.is_alive()
    assert outcome["result"].job.phase == "Abnormal"  # type: ignore[attr-defined]
    assert notes[0].startswith("connection lost") and notes[-1] == "connection back"


def test_preflight_reports_every_problem_and_sends_nothing(
    in_notebook: None, project: Path, service, store
) -> None:
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
    assert any("did you mean 'modelarts.vm.cpu.8u'?" in line for line in lines)
    assert any("holds no data; pass --upload-inputs" in line for line in lines)
    assert lines[-1] == "error: nothing was uploaded or created"
    assert service.search()[1] == 0
    assert list(store.list_all("majob-demo", "tiny/")) == []


def test_a_name_taken_at_create_says_code_and_status_once(
    in_notebook: None, project: Path, cloud: EmulatedCloud
) -> None:
    cloud.modelarts.add_fault(
        method="POST", path=r"/training-jobs$", count=1, status=400, code="ModelArts.2751"
    )
    result = submit(project)
    assert result.exit_code == 1, result.output
    error = next(line for line in result.output.splitlines() if line.startswith("error: "))
    assert error.startswith("error: ModelArts.2751: job name 'tiny-debug' is taken (")
    for part in ("ModelArts.2751", "status=400"):
        assert error.count(part) == 1, error
    assert "error: hint: see `majob list --name tiny-debug`" in result.output


def test_no_sdk_or_an_unknown_backend_is_one_line_and_exit_2(
    project: Path, cloud: EmulatedCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAJOB_BACKEND", "notebook")  # but the modelarts package is not here
    result = submit(project)
    assert result.exit_code == 2, result.output
    assert "error: the ModelArts notebook SDK (modelarts) is not importable here" in result.output
    monkeypatch.setenv("MAJOB_BACKEND", "banana")
    result = submit(project)
    assert result.exit_code == 2, result.output
    assert "error: MAJOB_BACKEND='banana' is not a backend" in result.output


def test_a_failed_create_masks_the_spec_secrets_it_quotes(
    notebook: None, project: Path, profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The token is the very text the failure quotes (the service is unreachable): neither the
    # error nor what it is chained to (MAJOB_DEBUG=1 prints both) shows it.
    secret = "Connection refused"
    monkeypatch.setenv("TOKEN", secret)
    spec_file = project / "spec.yaml"
    spec_file.write_text(spec_file.read_text() + "env: {API_TOKEN: '${TOKEN}'}\n")
    spec = load_spec(spec_file, profile=profile)
    from modelarts.session import Session  # the stand-in

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    session = Session()
    session.modelarts_endpoint = f"http://127.0.0.1:{port}"
    service = NotebookTrainingService(session, spec.from_environ.masker())
    with pytest.raises(ServiceError) as caught:
        service.create(to_rest_body(spec, "debug"))
    assert "***" in caught.value.message
    assert secret not in "".join(traceback.format_exception(caught.value))


@pytest.mark.parametrize("backend", ["rest", "notebook"])
def test_a_job_in_a_dedicated_cpu_pool_names_no_flavor(
    backend: str, notebook: None, project: Path, service, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAJOB_BACKEND", backend)
    spec = project / "spec.yaml"
    spec.write_text(
        spec.read_text().replace(
            "resources: {flavor: modelarts.vm.cpu.8u, nodes: 1}",
            "resources: {pool: pool-cpu-0001, nodes: 1}",
        )
    )
    result = submit(project, "--wait")
    assert result.exit_code == 0, result.output
    assert "phase: Completed" in result.output
    job = service.get(job_id_of(result.output))
    assert job.flavor == ""  # the body carried the pool and no flavor


def test_status_metrics_reads_the_measured_use_through_the_sdk(
    in_notebook: None, project: Path
) -> None:
    result = submit(project, "--wait", "--set", "hyperparameters.sleep=1.2")
    assert result.exit_code == 0, result.output
    shown = runner.invoke(
        app, ["status", job_id_of(result.output), "--metrics", "--profile", "emulator"]
    )
    assert shown.exit_code == 0, shown.output
    [line] = [line for line in shown.output.splitlines() if "metrics worker-0:" in line]
    assert "cpuUsage " in line and "memUsage " in line
