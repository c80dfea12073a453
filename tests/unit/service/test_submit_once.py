"""Idempotent create: a create whose fate is unknown is looked up before it is sent again."""

from __future__ import annotations

from typing import Any

import pytest

from majob.errors import ServiceError, ServiceUnreachable
from majob.service.base import SUBMIT_ID_ANNOTATION
from majob.service.code import code_digest, file_digests
from majob.service.create import create_once, is_ambiguous, submit_id, tagged
from majob.storage.plan import LocalFile


def body(name: str = "mnist-debug") -> dict[str, Any]:
    return tagged({"kind": "job", "metadata": {"name": name}}, "sid-1")


def no_sleep(seconds: float) -> None:
    pass


def fail(error: ServiceError) -> Any:
    def raise_it() -> None:
        raise error

    return raise_it


def test_the_submit_id_digests_body_code_and_stage(tmp_path: Any) -> None:
    files = [LocalFile("train.py", tmp_path / "train.py", 10, "aa")]
    changed = [LocalFile("train.py", tmp_path / "train.py", 10, "bb")]
    base = submit_id({"a": 1}, code_digest(file_digests(files)), "debug")
    assert base == submit_id({"a": 1}, code_digest(file_digests(files)), "debug")
    assert base != submit_id({"a": 2}, code_digest(file_digests(files)), "debug")
    assert base != submit_id({"a": 1}, code_digest(file_digests(changed)), "debug")
    assert base != submit_id({"a": 1}, code_digest(file_digests(files)), "formal")


def test_tagging_keeps_the_body_and_its_annotations() -> None:
    original = {"metadata": {"name": "j", "annotations": {"x": "1"}}}
    out = tagged(original, "sid")
    assert out["metadata"]["annotations"] == {"x": "1", SUBMIT_ID_ANNOTATION: "sid"}
    assert original["metadata"]["annotations"] == {"x": "1"}


@pytest.mark.parametrize(
    "error",
    [
        ServiceError("busy", status=503),
        ServiceError("throttled", status=429),
        ServiceUnreachable("connection dropped"),
    ],
)
def test_a_job_made_before_the_answer_was_lost_is_found_not_made_again(
    service: Any, error: ServiceError
) -> None:
    service.after_create.append(fail(error))
    job = create_once(service, body(), sleep=no_sleep)
    assert service.create_calls == 1
    assert len(service.jobs) == 1
    assert job.submit_id == "sid-1"


@pytest.mark.parametrize("status", [429, 503])
def test_a_create_turned_away_is_sent_again_once(service: Any, status: int) -> None:
    service.before_create.append(fail(ServiceError("no", status=status)))
    retried: list[str] = []
    job = create_once(service, body(), sleep=no_sleep, report=retried.append)
    assert service.create_calls == 2
    assert len(service.jobs) == 1
    assert job.name == "mnist-debug"
    assert "no job was made" in retried[0]


@pytest.mark.parametrize(
    "error",
    [ServiceUnreachable("did not answer in time"), ServiceError("gateway time-out", status=504)],
)
def test_a_create_still_in_flight_is_waited_for_not_sent_again(
    service: Any, error: ServiceError
) -> None:
    # The service is still working on the first create when its answer is lost: the job lands
    # only after two more searches.
    def lands() -> None:
        service.add_job("mnist-debug", "Creating", **{SUBMIT_ID_ANNOTATION: "sid-1"})

    service.before_create.append(fail(error))
    service.before_search += [lambda: None, lambda: None, lands]
    said: list[str] = []
    job = create_once(service, body(), sleep=no_sleep, report=said.append)
    assert service.create_calls == 1
    assert job.submit_id == "sid-1" and len(service.jobs) == 1
    assert "may still land" in said[0]
    assert not any("no job was made" in line for line in said)


def test_a_create_that_never_lands_is_sent_again_without_claiming_no_job(service: Any) -> None:
    service.before_create.append(fail(ServiceUnreachable("did not answer in time")))
    said: list[str] = []
    job = create_once(service, body(), sleep=no_sleep, landing_window=0.0, report=said.append)
    assert service.create_calls == 2
    assert job.submit_id == "sid-1"
    assert "sending it again" in said[-1]
    assert not any("no job was made" in line for line in said)


def test_giving_up_on_a_create_in_flight_says_a_job_may_still_appear(service: Any) -> None:
    service.before_create.append(fail(ServiceUnreachable("did not answer in time")))
    with pytest.raises(ServiceUnreachable) as raised:
        create_once(service, body(), sleep=no_sleep, budget=0.0)
    assert "may still appear" in (raised.value.hint or "")


def test_a_refusal_is_not_retried(service: Any) -> None:
    service.before_create.append(
        fail(ServiceError("bad flavor", code="ModelArts.2763", status=400))
    )
    with pytest.raises(ServiceError, match=r"ModelArts\.2763"):
        create_once(service, body(), sleep=no_sleep)
    assert service.create_calls == 1
    assert not service.jobs


def test_a_taken_name_on_the_first_try_is_not_retried(service: Any) -> None:
    service.before_create.append(fail(ServiceError("dup", code="ModelArts.2751", status=400)))
    with pytest.raises(ServiceError, match="2751"):
        create_once(service, body(), sleep=no_sleep)
    assert service.create_calls == 1


def test_another_jobs_submit_id_is_not_taken_for_ours(service: Any) -> None:
    service.add_job("mnist-debug", "Completed", **{SUBMIT_ID_ANNOTATION: "another"})
    service.after_create.append(fail(ServiceUnreachable("dropped")))
    job = create_once(service, body(), sleep=no_sleep)
    assert job.submit_id == "sid-1"
    assert service.create_calls == 1


def test_the_budget_bounds_the_retries(service: Any) -> None:
    for _ in range(100):
        service.before_create.append(fail(ServiceError("busy", status=503)))
    with pytest.raises(ServiceError, match="busy"):
        create_once(service, body(), sleep=no_sleep, budget=0.0)
    assert not service.jobs


def test_what_is_ambiguous() -> None:
    assert is_ambiguous(ServiceUnreachable("x"))
    assert is_ambiguous(ServiceError("x", status=502))
    assert not is_ambiguous(ServiceError("x", status=400))
    assert not is_ambiguous(ValueError("x"))


def test_an_untagged_body_is_a_programming_error(service: Any) -> None:
    with pytest.raises(ValueError, match="submit id"):
        create_once(service, {"metadata": {"name": "x"}}, sleep=no_sleep)
