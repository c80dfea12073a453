"""How ``majob status`` words a job's tasks: never a bare ``task worker-0:``."""

from __future__ import annotations

from majob.cli.jobtext import task_text
from majob.service.base import Job, TaskStatus


def test_a_task_that_ended_shows_its_exit_code_and_message() -> None:
    job = Job(id="j", name="n", phase="Failed")
    state = TaskStatus("worker-0", 3, "OOM")
    assert task_text("worker-0", state, job) == "task worker-0: exit 3 (OOM)"


def test_a_task_still_running_says_it_has_no_exit_code_yet() -> None:
    job = Job(id="j", name="n", phase="Running")
    assert task_text("worker-0", None, job) == "task worker-0: no exit code yet (job Running)"


def test_a_finished_job_without_the_task_s_exit_code_says_so() -> None:
    job = Job(id="j", name="n", phase="Completed")
    assert task_text("worker-1", None, job) == "task worker-1: no exit code reported"
