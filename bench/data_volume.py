"""A 4-node job on the emulated ModelArts reading one input from an SFS Turbo volume against the
same input downloaded from OBS by every node (issue 38, bench/data.py's second measurement).

The input (8 files, 2 GiB in all; ``--quick``: 128 MiB) is put on the emulator's OBS with
majob's sync, then staged once into the share's folder (``sfs.volume_dir``) with the stage
engine. Two jobs run on a dedicated pool, 4 nodes each, the same script:

- **OBS**: every node downloads the input from OBS into a folder of its own (what ModelArts does
  for an OBS input: each node's container gets its own copy), then reads it;
- **SFS**: the volume is mounted read-only at ``/mnt/sfs_turbo``; every node reads the input
  there.

A job's wall time is from its create request to the ``Completed`` phase (the emulator's own
work, the same for both, included). The bytes moved are what the nodes fetched from OBS, and
for the volume the one stage that filled it.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from majob.data.stage_copy import stage_tree
from majob.emulator import sfs
from majob.emulator.cloud import EmulatedCloud
from majob.emulator.statefile import EmulatorEndpoints
from majob.storage.obs import ObsObjectStore
from majob.storage.sync import sync_dir
from majob.storage.uri import ObsUri
from majob.testing import obs_config, wait_until
from majob.text import human_bytes

BUCKET = "majob-demo"
SHARE = "192.168.0.169:/"
MOUNT = "/mnt/sfs_turbo"
NODES = 4
FILES = 8
MiB = 1 << 20

# Each node: download --source (an obs:// folder) into a folder of its own, or take --dir;
# then read every byte under it. One line: what it fetched from OBS and what it read.
SCRIPT = """\
import argparse, os, pathlib, time
p = argparse.ArgumentParser()
p.add_argument("--source", default=""); p.add_argument("--dir", default="")
a, _ = p.parse_known_args()
task = os.environ["VC_TASK_INDEX"]
started = time.perf_counter()
fetched = 0
folder = a.dir
if a.source:
    from majob.storage.download import download_tree
    from majob.storage.obs import open_store
    from majob.storage.uri import ObsUri
    folder = os.path.join(os.getcwd(), f"input-{task}")
    with open_store() as store:
        got = download_tree(store, ObsUri.parse(a.source), pathlib.Path(folder), jobs=8)
    fetched = got.bytes
read = 0
for root, _, names in os.walk(folder):
    for name in names:
        with open(os.path.join(root, name), "rb") as handle:
            while chunk := handle.read(8 << 20):
                read += len(chunk)
took = time.perf_counter() - started
print(f"node={task} fetched={fetched} read={read} s={took:.2f}", flush=True)
"""


def make_input(root: Path, total_mib: int) -> Path:
    folder = root / "input"
    folder.mkdir(parents=True)
    block = os.urandom(MiB)
    for index in range(FILES):
        with open(folder / f"shard-{index}.bin", "wb") as out:
            for mib in range(total_mib // FILES):
                out.write((index * 100_000 + mib).to_bytes(8, "little") + block[8:])
    return folder


def measure_volume_job(total_mib: int) -> dict[str, Any]:
    """Both jobs' wall times and bytes, and the stage that filled the volume."""
    with tempfile.TemporaryDirectory(prefix="majob-bench-volume-") as tmp_text:
        tmp = Path(tmp_text)
        source = make_input(tmp, total_mib)
        with EmulatedCloud(tmp / "emulator", upload_period=1.0) as cloud:
            src = ObsUri(BUCKET, "bench/input/")
            with ObsObjectStore(obs_config(cloud.endpoints.obs)) as store:
                sync_dir(store, source, src, cache_dir=tmp / "cache")
                store.put_bytes(BUCKET, "bench/code/train.py", SCRIPT.encode())
                started = time.perf_counter()
                staged = stage_tree(store, src, sfs.volume_dir(cloud.state_dir, SHARE) / "input")
                stage_s = time.perf_counter() - started
            client = _client(cloud.endpoints)
            obs_job = _run_job(client, _body(cloud.endpoints, "obs-input", src, volume=False))
            sfs_job = _run_job(client, _body(cloud.endpoints, "sfs-input", src, volume=True))
    return {
        "input_bytes": staged.bytes,
        "stage_s": stage_s,
        "stage_bytes": staged.copied_bytes,
        "obs": obs_job,
        "sfs": sfs_job,
    }


def _client(endpoints: EmulatorEndpoints) -> Any:
    from huaweicloudsdkcore.auth.credentials import BasicCredentials
    from huaweicloudsdkcore.http.http_config import HttpConfig
    from huaweicloudsdkmodelarts.v1 import ModelArtsClient

    config = HttpConfig.get_default_config()
    credentials = BasicCredentials(endpoints.access_key, endpoints.secret_key, endpoints.project_id)
    return (
        ModelArtsClient.new_builder()
        .with_http_config(config)
        .with_credentials(credentials)
        .with_endpoint(endpoints.modelarts)
        .build()
    )


def _body(endpoints: EmulatorEndpoints, name: str, src: ObsUri, *, volume: bool) -> Any:
    parameters = [{"name": "dir", "value": f"{MOUNT}/input"}] if volume else []
    parameters += [] if volume else [{"name": "source", "value": src.uri}]
    spec: dict[str, Any] = {
        "resource": {
            "flavor_id": "modelarts.pool.visual.xlarge",
            "pool_id": "pool-bench",
            "node_count": NODES,
        },
    }
    if volume:
        spec["volumes"] = [
            {"nfs": {"nfs_server_path": SHARE, "local_path": MOUNT, "read_only": True}}
        ]
    environments = {
        "MAJOB_OBS_ENDPOINT": endpoints.obs,
        "HUAWEICLOUD_SDK_AK": endpoints.access_key,
        "HUAWEICLOUD_SDK_SK": endpoints.secret_key,
    }
    algorithm = {
        "code_dir": f"/{BUCKET}/bench/code/",
        "boot_file": f"/{BUCKET}/bench/code/train.py",
        "engine": {
            "engine_name": "PyTorch",
            "engine_version": "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
        },
        "parameters": parameters,
        "environments": environments,
    }
    return {"kind": "job", "metadata": {"name": name}, "algorithm": algorithm, "spec": spec}


def _run_job(client: Any, body: Any) -> dict[str, Any]:
    from huaweicloudsdkmodelarts.v1.model import (
        CreateTrainingJobRequest,
        ShowTrainingJobDetailsRequest,
        ShowTrainingJobLogsPreviewRequest,
    )

    started = time.perf_counter()
    job_id = client.create_training_job(CreateTrainingJobRequest(body=body)).metadata.id

    def ended() -> Any:
        shown = client.show_training_job_details(
            ShowTrainingJobDetailsRequest(training_job_id=job_id)
        )
        phase = shown.status.phase
        return phase if phase in ("Completed", "Failed", "Terminated", "Abnormal") else None

    phase = wait_until(ended, f"job {job_id}", timeout=3600, interval=0.05)
    seconds = time.perf_counter() - started
    lines: list[str] = []
    for node in range(NODES):
        log = client.show_training_job_logs_preview(
            ShowTrainingJobLogsPreviewRequest(training_job_id=job_id, task_id=f"worker-{node}")
        )
        lines += [line for line in (log.content or "").splitlines() if "fetched=" in line]
    fields = [dict(part.split("=", 1) for part in line.split()[-4:]) for line in lines]
    return {
        "phase": phase,
        "seconds": seconds,
        "nodes_done": len(fields),
        "fetched": sum(int(f["fetched"]) for f in fields),
        "read": sum(int(f["read"]) for f in fields),
    }


def print_volume_job(result: dict[str, Any], ratio: Callable[[float, float], str]) -> None:
    size = human_bytes(result["input_bytes"])
    print(f"\n{NODES}-node job reading {size}: SFS volume against per-node OBS downloads")
    print(
        f"stage OBS -> SFS (once)  {result['stage_s']:8.2f} s  "
        f"moved {human_bytes(result['stage_bytes'])} from OBS"
    )
    for name in ("obs", "sfs"):
        job = result[name]
        print(
            f"job, input on {name.upper():3}      {job['seconds']:8.2f} s  {job['phase']:9} "
            f"nodes {job['nodes_done']}/{NODES}  from OBS {human_bytes(job['fetched'])}  "
            f"read {human_bytes(job['read'])}"
        )
    obs, vol = result["obs"], result["sfs"]
    print(f"SFS job / OBS job wall:    {ratio(vol['seconds'], obs['seconds'])}")
    with_stage = vol["seconds"] + result["stage_s"]
    print(f"(SFS job + stage) / OBS job: {ratio(with_stage, obs['seconds'])}")
    moved = result["stage_bytes"] + vol["fetched"]
    print(
        f"bytes from OBS: {human_bytes(obs['fetched'])} per-node downloads against "
        f"{human_bytes(moved)} for the stage (the volume's jobs fetch none)"
    )
