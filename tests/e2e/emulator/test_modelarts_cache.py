"""Each node's /cache in the fake ModelArts: a folder of its own, and a capacity (the flavor's
disk, or what a test sets) that a job writing past it fails on, with the eviction event."""

from __future__ import annotations

from typing import Any

from huaweicloudsdkmodelarts.v1.model import CreateTrainingJobRequest, ListTrainingJobEventsRequest

from majob.emulator.modelarts.nodecache import set_cache_size
from tests.e2e.conftest import CACHE_WRITER as SCRIPT
from tests.e2e.emulator.conftest import Harness


def _run(harness: Harness, write: int, nodes: int = 1) -> tuple[str, str]:
    harness.upload_job(script=SCRIPT)
    harness.put("jobs/a/data/numbers.txt", "1")
    body: Any = harness.body(
        f"cache-{write}",
        parameters=[
            {"name": "cache", "value": "/cache/tmp"},
            {"name": "write", "value": str(write)},
        ],
        resource={"flavor_id": "modelarts.vm.cpu.8u", "node_count": nodes},
    )
    job_id = harness.client.create_training_job(CreateTrainingJobRequest(body=body)).metadata.id
    return job_id, harness.wait(job_id).status.phase


def test_each_node_has_its_own_cache(harness: Harness) -> None:
    job_id, phase = _run(harness, 10, nodes=2)
    assert phase == "Completed", harness.log(job_id)
    first, second = harness.log(job_id, "worker-0"), harness.log(job_id, "worker-1")
    assert "/cache/worker-0 " not in first  # the container path became the node's folder
    assert "cache/worker-0/tmp ['scratch.bin']" in first
    assert "cache/worker-1/tmp ['scratch.bin']" in second


def test_a_job_that_fills_the_nodes_disk_fails_with_the_eviction_event(harness: Harness) -> None:
    set_cache_size(harness.cloud.state_dir, "modelarts.vm.cpu.8u", 2000)
    job_id, phase = _run(harness, 5000)
    assert phase == "Failed"
    answer = harness.client.list_training_job_events(
        ListTrainingJobEventsRequest(training_job_id=job_id)
    )
    full = [e.message for e in answer.events if "local disk is full" in e.message]
    assert full and "worker-0" in full[0] and "evicted" in full[0]
    assert "modelarts.vm.cpu.8u" in full[0] and "Traceback" not in full[0]


def test_a_job_within_the_nodes_disk_completes(harness: Harness) -> None:
    set_cache_size(harness.cloud.state_dir, "modelarts.vm.cpu.8u", 100_000)
    job_id, phase = _run(harness, 5000)
    assert phase == "Completed", harness.log(job_id)
