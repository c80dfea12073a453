"""The backend-neutral values read from REST v2 answers (reference §2.4)."""

from __future__ import annotations

from majob.service.base import Job
from majob.spec.catalog import Engine, Flavor

WIRE = {
    "kind": "job",
    "metadata": {
        "id": "3faf5c03-aaa1-4ad3-b4e9-1e8bbd8d6d3a",
        "name": "mnist-digits-debug",
        "create_time": 1700000000000,
        "annotations": {"majob/submit-id": "abc", "key_task": "worker"},
    },
    "status": {
        "phase": "Failed",
        "secondary_phase": "Failed",
        "duration": 61234,
        "start_time": 1700000001000,
        "tasks": ["worker-0", "worker-1"],
        "task_statuses": [
            {"task": "worker-0", "exit_code": 0, "message": ""},
            {"task": "worker-1", "exit_code": 3, "message": "exited"},
        ],
    },
    "spec": {"resource": {"flavor_id": "modelarts.vm.cpu.8u", "node_count": 2}},
}


def test_a_job_from_the_wire() -> None:
    job = Job.from_wire(WIRE)
    assert (job.id, job.name, job.phase) == (
        "3faf5c03-aaa1-4ad3-b4e9-1e8bbd8d6d3a",
        "mnist-digits-debug",
        "Failed",
    )
    assert job.duration_ms == 61234 and job.start_time == 1700000001000
    assert job.submit_id == "abc"
    assert job.finished and not job.succeeded
    failed = job.failed_task()
    assert failed is not None and (failed.task, failed.exit_code) == ("worker-1", 3)
    assert (job.flavor, job.node_count) == ("modelarts.vm.cpu.8u", 2)


def test_a_new_job_lists_its_tasks_by_node_count() -> None:
    job = Job.from_wire(
        {"metadata": {"id": "x", "name": "n"}, "spec": {"resource": {"node_count": 3}}}
    )
    assert job.phase == "Creating" and not job.finished
    assert job.task_names() == ("worker-0", "worker-1", "worker-2")


def test_flavors_and_engines_from_the_wire() -> None:
    flavor = Flavor.from_wire(
        {
            "flavor_id": "modelarts.bm.snt9.xlarge.8",
            "flavor_type": "Ascend",
            "flavor_info": {"max_num": 8, "npu": {"unit_num": 8, "product_name": "Ascend-910"}},
        }
    )
    assert flavor.max_num == 8 and flavor.is_ascend
    assert "unit_num=8" in flavor.npu
    engine = Engine.from_wire(
        {
            "engine_name": "Ascend-Powered-Engine",
            "engine_version": "mindspore_1.6.0-cann_5.0.3.6-py_3.7-euler_2.8.3-aarch64",
        }
    )
    assert engine.is_ascend
    assert not Engine("PyTorch", "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64").is_ascend
