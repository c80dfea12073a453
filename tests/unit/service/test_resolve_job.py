"""``majob status|logs|stop|delete JOB``: a name several jobs share is refused with their ids.

ModelArts refuses a second job of a name that exists (ModelArts.2751), so this happens only
with jobs it kept apart otherwise (older jobs, other rules per region): the CLI still says so
rather than picking one."""

from __future__ import annotations

from typing import Any

import pytest

from majob.cli.jobs import resolve_job
from majob.errors import ServiceNotFound, UserInputError


def test_a_name_two_jobs_share_is_refused_with_their_ids(service: Any) -> None:
    first = service.add_job("tiny-debug", "Completed")
    second = service.add_job("tiny-debug", "Running")
    with pytest.raises(UserInputError) as caught:
        resolve_job(service, "tiny-debug")
    assert "2 jobs are named 'tiny-debug'" in caught.value.message
    assert first in caught.value.message and second in caught.value.message


def test_a_unique_name_or_an_id_names_its_job(service: Any) -> None:
    job_id = service.add_job("tiny-debug", "Completed")
    assert resolve_job(service, "tiny-debug").id == job_id
    assert resolve_job(service, job_id).name == "tiny-debug"
    with pytest.raises(ServiceNotFound):
        resolve_job(service, "nothing-like-it")
