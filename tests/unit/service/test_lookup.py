"""Which job a reference means: a full id, a unique id prefix, a name (the newest)."""

from __future__ import annotations

import pytest

from majob.errors import ServiceNotFound, UserInputError
from majob.service.lookup import SCANNED, find_job

from .conftest import ScriptedService


def add(service: ScriptedService, job_id: str, name: str, created: int) -> str:
    service.jobs[job_id] = {
        "metadata": {"id": job_id, "name": name, "create_time": created},
        "status": {"phase": "Completed"},
    }
    return job_id


@pytest.fixture
def jobs(service: ScriptedService) -> ScriptedService:
    add(service, "3f2a9c1e-0000-4000-8000-000000000001", "mnist-debug", 1_000)
    add(service, "3f2a7777-0000-4000-8000-000000000002", "mnist-debug", 3_000)
    add(service, "b0b0b0b0-0000-4000-8000-000000000003", "mnist-debug", 2_000)
    add(service, "c0ffee00-0000-4000-8000-000000000004", "cafe", 4_000)
    return service


def test_a_full_id_a_unique_prefix_and_an_unshared_name(jobs: ScriptedService) -> None:
    assert find_job(jobs, "3f2a9c1e-0000-4000-8000-000000000001").job.name == "mnist-debug"
    assert find_job(jobs, "3f2a9c1e").job.id.startswith("3f2a9c1e")
    assert find_job(jobs, "3F2A9").job.id.startswith("3f2a9c1e")  # as printed, any case
    match = find_job(jobs, "cafe")  # hex-looking, but no id starts so: it is the name
    assert (match.job.id[:8], match.others, match.note()) == ("c0ffee00", (), "")


def test_an_ambiguous_prefix_is_one_error_listing_the_candidates(jobs: ScriptedService) -> None:
    with pytest.raises(UserInputError) as raised:
        find_job(jobs, "3f2a")
    assert raised.value.message == (
        "2 jobs have ids starting with '3f2a': "
        "3f2a9c1e-0000-4000-8000-000000000001 (mnist-debug, Completed), "
        "3f2a7777-0000-4000-8000-000000000002 (mnist-debug, Completed)"
    )
    assert raised.value.hint == "pass more of the id"


def test_a_shared_name_means_the_newest_and_the_note_lists_the_others(
    jobs: ScriptedService,
) -> None:
    match = find_job(jobs, "mnist-debug")
    assert match.job.id.startswith("3f2a7777")
    assert [job.id[:8] for job in match.others] == ["b0b0b0b0", "3f2a9c1e"]
    assert match.note() == (
        "3 jobs are named 'mnist-debug': using the newest, "
        "3f2a7777-0000-4000-8000-000000000002 (mnist-debug, Completed); the others: "
        "b0b0b0b0-0000-4000-8000-000000000003 (mnist-debug, Completed), "
        "3f2a9c1e-0000-4000-8000-000000000001 (mnist-debug, Completed) (pass an id to choose one)"
    )


def test_any_unique_start_will_do_and_nothing_matching_is_one_error(
    jobs: ScriptedService,
) -> None:
    assert find_job(jobs, "c").job.name == "cafe"  # one character, if no other id shares it
    with pytest.raises(UserInputError, match="2 jobs have ids starting with '3f2'"):
        find_job(jobs, "3f2")
    for ref in ("deadbeef", "mnist"):  # "mnist" is a substring of a name, not a name
        with pytest.raises(ServiceNotFound, match="no job has the id, short id or name"):
            find_job(jobs, ref)


def test_a_reference_that_is_both_an_ids_start_and_a_name_is_refused(
    jobs: ScriptedService,
) -> None:
    add(jobs, "d1d1d1d1-0000-4000-8000-000000000005", "b0b0", 5_000)
    with pytest.raises(UserInputError) as raised:
        find_job(jobs, "b0b0")
    assert raised.value.message == (
        "'b0b0' is the start of job id b0b0b0b0-0000-4000-8000-000000000003 (mnist-debug, "
        "Completed) and the name of job d1d1d1d1-0000-4000-8000-000000000005 (b0b0, Completed)"
    )


def test_a_prefix_is_looked_for_among_the_newest_jobs_only(service: ScriptedService) -> None:
    for index in range(SCANNED + 1):
        add(service, f"{index:08x}-0000-4000-8000-000000000000", "many", index)
    # The scripted service lists oldest first: the last one added is past the scan.
    assert find_job(service, f"{SCANNED - 1:08x}").job.create_time == SCANNED - 1
    with pytest.raises(ServiceNotFound, match=f"among the newest {SCANNED} jobs"):
        find_job(service, f"{SCANNED:08x}")
