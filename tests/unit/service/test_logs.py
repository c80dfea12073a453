"""Log lines: all tasks merged with [worker-i] prefixes, read incrementally."""

from __future__ import annotations

from typing import Any

import pytest

from majob.errors import ServiceNotFound
from majob.service.logs import PAGE, LogCursor, iter_logs


def test_tasks_are_merged_with_prefixes(service: Any) -> None:
    job_id = service.add_job("j", "Completed")
    service.jobs[job_id]["status"]["tasks"] = ["worker-0", "worker-1"]
    service.logs[(job_id, "worker-0")] = ["a", "b"]
    service.logs[(job_id, "worker-1")] = ["c"]
    assert list(iter_logs(service, job_id)) == ["[worker-0] a", "[worker-0] b", "[worker-1] c"]
    assert list(iter_logs(service, job_id, task="worker-1")) == ["c"]


def test_the_cursor_reads_only_new_lines_and_pages(service: Any) -> None:
    job_id = service.add_job("j", "Running")
    log = service.logs.setdefault((job_id, "worker-0"), [])
    log.extend(str(i) for i in range(PAGE + 3))
    cursor = LogCursor(job_id)
    job = service.get(job_id)
    first = cursor.poll(service, job)
    assert len(first) == PAGE + 3 and first[-1] == f"[worker-0] {PAGE + 2}"
    assert cursor.poll(service, job) == []
    log.append("late")
    assert cursor.poll(service, job) == ["[worker-0] late"]


def test_an_unknown_task_is_named(service: Any) -> None:
    job_id = service.add_job("j", "Completed")
    with pytest.raises(ServiceNotFound, match="no task 'worker-7'"):
        list(iter_logs(service, job_id, task="worker-7"))
