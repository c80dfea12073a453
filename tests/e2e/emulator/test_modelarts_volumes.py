"""SFS Turbo volumes in the fake ModelArts: one real folder per share, kept across jobs, seen at
the mount point by every node, read-only when asked, refused without a dedicated pool, and a job
that fills its share fails the way a full share ends it (the event says so)."""

from __future__ import annotations

from typing import Any

import pytest
from huaweicloudsdkcore.exceptions.exceptions import ClientRequestException
from huaweicloudsdkmodelarts.v1.model import (
    CreateTrainingJobRequest,
    ListTrainingJobEventsRequest,
    ShowTrainingJobDetailsRequest,
)

from majob.emulator import sfs
from tests.e2e.emulator.conftest import Harness

SHARE = "192.168.0.169:/"
MOUNT = "/mnt/sfs_turbo"

# Writes --write bytes (a file named after the task) under --dir, or prints what it reads there.
SCRIPT = """\
import argparse, os
p = argparse.ArgumentParser()
p.add_argument("--dir"); p.add_argument("--write", type=int, default=0)
a, _ = p.parse_known_args()
task = os.environ["VC_TASK_INDEX"]
if a.write:
    os.makedirs(a.dir, exist_ok=True)
    with open(os.path.join(a.dir, f"from-{task}.bin"), "wb") as out:
        out.write(b"x" * a.write)
    print("wrote", a.write, flush=True)
else:
    print(f"task {task} reads", sorted(os.listdir(a.dir)), os.environ["SHARE_DIR"], flush=True)
"""


def _body(harness: Harness, name: str, *, write: int, read_only: bool, nodes: int = 1) -> Any:
    body = harness.body(
        name,
        parameters=[
            {"name": "dir", "value": f"{MOUNT}/data"},
            {"name": "write", "value": str(write)},
        ],
        environments={"SHARE_DIR": f"{MOUNT}/data"},
        resource={
            "flavor_id": "modelarts.pool.visual.xlarge",
            "pool_id": "pool-test",
            "node_count": nodes,
        },
    )
    body["spec"]["volumes"] = [
        {"nfs": {"nfs_server_path": SHARE, "local_path": MOUNT, "read_only": read_only}}
    ]
    return body


def _run(harness: Harness, body: Any) -> tuple[str, str]:
    job_id = harness.client.create_training_job(CreateTrainingJobRequest(body=body)).metadata.id
    return job_id, harness.wait(job_id).status.phase


def _events(harness: Harness, job_id: str) -> list[str]:
    answer = harness.client.list_training_job_events(
        ListTrainingJobEventsRequest(training_job_id=job_id)
    )
    return [e.message for e in answer.events]


def test_a_share_keeps_what_one_job_wrote_for_every_node_of_the_next(harness: Harness) -> None:
    harness.upload_job(script=SCRIPT)
    harness.put("jobs/a/data/numbers.txt", "1")
    writer, phase = _run(harness, _body(harness, "writer", write=5, read_only=False))
    assert phase == "Completed", harness.log(writer)
    folder = sfs.volume_dir(harness.cloud.state_dir, SHARE) / "data"
    assert (folder / "from-0.bin").read_bytes() == b"xxxxx"

    reader, phase = _run(harness, _body(harness, "reader", write=0, read_only=True, nodes=2))
    assert phase == "Completed", harness.log(reader)
    for task in (0, 1):
        log = harness.log(reader, f"worker-{task}")
        assert f"task {task} reads ['from-0.bin'] {folder}" in log
    shown = harness.client.show_training_job_details(
        ShowTrainingJobDetailsRequest(training_job_id=reader)
    )
    assert shown.spec.volumes[0].nfs.local_path == MOUNT


def test_a_job_that_fills_its_share_fails_with_the_event(harness: Harness) -> None:
    harness.upload_job(script=SCRIPT)
    harness.put("jobs/a/data/numbers.txt", "1")
    sfs.set_quota(harness.cloud.state_dir, SHARE, 1000)
    job_id, phase = _run(harness, _body(harness, "filler", write=4000, read_only=False))
    assert phase == "Failed"
    full = [m for m in _events(harness, job_id) if "is full" in m]
    assert full and SHARE in full[0] and "No space left on device" in full[0]
    assert "Traceback" not in full[0]


def test_a_job_that_stays_within_its_share_capacity_completes(
    harness: Harness,
) -> None:
    harness.upload_job(script=SCRIPT)
    harness.put("jobs/a/data/numbers.txt", "1")
    sfs.set_quota(harness.cloud.state_dir, SHARE, 10_000)
    job_id, phase = _run(harness, _body(harness, "small", write=100, read_only=False))
    assert phase == "Completed", harness.log(job_id)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"pool_id": None}, "needs a dedicated resource pool"),
        ({"nfs_server_path": "192.168.0.169"}, "is not SERVER:/PATH"),
        ({"local_path": "mnt/x"}, "must be an absolute folder"),
        ({"local_path": "/home/ma-user/modelarts/inputs"}, "overlaps"),
    ],
)
def test_bad_volumes_are_refused_with_400(
    harness: Harness, change: dict[str, Any], said: str
) -> None:
    harness.upload_job(script=SCRIPT)
    body = _body(harness, "bad", write=0, read_only=True)
    nfs = body["spec"]["volumes"][0]["nfs"]
    for key, value in change.items():
        if key == "pool_id":
            del body["spec"]["resource"]["pool_id"]
            body["spec"]["resource"]["flavor_id"] = "modelarts.vm.cpu.8u"
        else:
            nfs[key] = value
    with pytest.raises(ClientRequestException) as caught:
        harness.client.create_training_job(CreateTrainingJobRequest(body=body))
    assert caught.value.status_code == 400 and said in caught.value.error_msg
