"""The official huaweicloudsdkmodelarts client drives every endpoint of the emulated ModelArts."""

from __future__ import annotations

import socket
import traceback
from pathlib import Path

import pytest

from majob.compile.rest import to_rest_body
from majob.errors import ServiceAuthError, ServiceError, ServiceNotFound, ServiceUnreachable
from majob.service.base import JobFilter
from majob.service.code import sync_code
from majob.service.connect import service_config
from majob.service.rest import RestTrainingService, ServiceConfig
from majob.service.submit import Submitter, plan_submit
from majob.spec.load import load_spec
from majob.spec.profiles import Profile
from majob.storage.config import Credentials
from majob.testing import wait_until


def submitted(project: Path, profile: Profile, service, store, *sets: str):
    spec = load_spec(project / "spec.yaml", overrides=list(sets), profile=profile)
    plan = plan_submit(spec, "debug")
    return Submitter(service, store, profile).submit(plan, upload_inputs=True)


def test_every_endpoint(project: Path, profile: Profile, service, store) -> None:
    flavors = service.flavors()
    assert any(f.id == "modelarts.vm.cpu.8u" and f.max_num >= 1 for f in flavors)
    engines = service.engines()
    assert any(e.name == "PyTorch" for e in engines)

    job = submitted(project, profile, service, store)
    assert job.name == "tiny-debug" and job.submit_id
    done = wait_until(lambda: (j := service.get(job.id)).finished and j, "the job to end")
    assert done.phase == "Completed", done
    assert done.task_statuses and done.task_statuses[0].exit_code == 0
    assert (
        store.get_bytes("majob-demo", "tiny/out/debug/out.txt") == b"PAYLOAD"
    )  # the debug stage's own folder

    chunk = service.log_lines(job.id, "worker-0", 0, 500)
    assert "step 2" in chunk.lines and chunk.end_line >= len(chunk.lines)
    later = service.log_lines(job.id, "worker-0", chunk.end_line, 500)
    assert later.lines == ()
    assert "done" in service.log_preview(job.id, "worker-0")
    assert service.events(job.id)

    found, total = service.search(JobFilter(name="tiny", phases=["Completed"]))
    assert [j.id for j in found] == [job.id] and total == 1
    assert service.search(JobFilter(name="tiny", phases=["Running"]))[0] == []

    # The ended job holds its name until it is deleted (ModelArts.2751 otherwise).
    service.delete(job.id)
    with pytest.raises(ServiceNotFound):
        service.get(job.id)

    running = submitted(project, profile, service, store, "hyperparameters.sleep=60")
    wait_until(lambda: service.get(running.id).phase == "Running", "Running")
    stopped = service.terminate(running.id)
    assert stopped.phase in ("Terminating", "Terminated")
    assert wait_until(lambda: service.get(running.id).phase == "Terminated", "Terminated")


def test_a_refused_create_carries_code_and_remedy(
    project: Path, profile: Profile, service, store
) -> None:
    spec = load_spec(project / "spec.yaml", profile=profile)
    sync_code(spec, store)  # the code is there: the flavor is what is wrong
    body = to_rest_body(spec, "debug")
    body["spec"]["resource"]["flavor_id"] = "modelarts.vm.cpu.9u"
    with pytest.raises(ServiceError) as caught:
        service.create(body)
    assert caught.value.code == "ModelArts.2763"
    assert caught.value.remedy
    assert caught.value.request_id is None or isinstance(caught.value.request_id, str)


def test_a_wrong_secret_key_is_refused_in_one_line_without_the_key(profile: Profile) -> None:
    config = service_config(profile)
    wrong = "definitely-not-the-secret-0000000000000"
    bad = RestTrainingService(
        type(config)(
            endpoint=config.endpoint,
            project_id=config.project_id,
            credentials=Credentials(config.credentials.access_key, wrong),
        )
    )
    with bad, pytest.raises(ServiceAuthError) as caught:
        bad.flavors()
    text = "\n".join(caught.value.lines())
    assert wrong not in text
    assert caught.value.status in (401, 403)


def test_an_unreachable_service_is_one_error_with_no_sdk_lines_and_no_secret(
    capfd: pytest.CaptureFixture[str],
) -> None:
    # The secret key is the very text the failure quotes: neither majob's error nor what it is
    # chained to (MAJOB_DEBUG=1 prints both) shows it. The SDK's own logger ("ConnectionException
    # occurred. ...", one line per try) writes nothing: the error is majob's one line.
    secret = "Connection refused"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = ServiceConfig(
        endpoint=f"http://127.0.0.1:{port}",
        project_id="0" * 32,
        credentials=Credentials("MAJOBFAKEACCESSKEY00", secret),
        timeout=2.0,
        retries=2,
    )
    with RestTrainingService(config) as unreachable, pytest.raises(ServiceUnreachable) as caught:
        unreachable.flavors()
    chain: list[BaseException] = []
    current: BaseException | None = caught.value
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    assert secret not in "".join("".join(traceback.format_exception_only(e)) for e in chain)
    assert secret not in "".join(traceback.format_exception(caught.value))
    captured = capfd.readouterr()
    assert "occurred" not in captured.err and captured.err == ""


def test_events_newest_are_the_latest_page_oldest_first(
    project: Path, profile: Profile, service, store, cloud
) -> None:
    job = submitted(project, profile, service, store)
    wait_until(lambda: service.get(job.id).finished, "the job to end")
    events = cloud.modelarts.backend.store
    for number in range(120):  # more than one page (the API gives 100 at most)
        events.add_event(job.id, f"note {number}", level="Warning" if number % 2 else "Info")
    first = service.events(job.id)
    assert len(first) == 100 and "note 119" not in [e.message for e in first]
    latest = service.events(job.id, limit=5, newest=True)
    assert [e.message for e in latest] == [f"note {n}" for n in range(115, 120)]
    warnings = service.events(job.id, limit=3, newest=True, level="Warning")
    assert [e.message for e in warnings] == ["note 115", "note 117", "note 119"]
