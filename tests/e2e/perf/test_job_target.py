"""``majob perf JOB``: the job's stage output on the emulated OBS, where the ledger says the
job's spec wrote, downloaded and diagnosed; a job with no profiling data is one message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.pipeline.ledger import Ledger
from majob.service.connect import open_service
from majob.service.submit import Submitter, plan_submit
from majob.spec.digest import normalised_spec
from majob.spec.load import load_spec
from majob.spec.profiles import Profile
from majob.storage.obs import ObsObjectStore
from majob.testing import wait_until

# An emulated job that imports torch and is profiled: minutes on a loaded 2-core machine.
pytestmark = pytest.mark.timeout(900)

# The job writes a profile as the collection side would (no torch: a tiny hand-made trace of
# four steps that each wait 5 ms for data), or none when told so.
SCRIPT = """\
import argparse, json, os
parser = argparse.ArgumentParser()
parser.add_argument("--train_url")
parser.add_argument("--profile", type=int, default=1)
args, _ = parser.parse_known_args()
if args.profile:
    folder = os.path.join(args.train_url, "profiling", "worker-0-rank0_20261206000000_ascend_pt")
    os.makedirs(os.path.join(folder, "ASCEND_PROFILER_OUTPUT"))
    events, t = [], 0.0
    for step in range(4):
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}",
                       "pid": 1, "tid": 1, "ts": t, "dur": 6000.0})
        events.append({"ph": "X", "cat": "user_annotation", "pid": 1, "tid": 1, "ts": t,
                       "dur": 5000.0,
                       "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"})
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1,
                       "ts": t + 5000.0, "dur": 900.0})
        t += 6000.0
    with open(os.path.join(folder, "ASCEND_PROFILER_OUTPUT", "trace_view.json"), "w") as out:
        json.dump({"schemaVersion": 1, "traceEvents": events}, out)
    with open(os.path.join(folder, "profiler_info_0.json"), "w") as out:
        json.dump({"rank_id": 0, "node": 0, "device": "cpu", "complete": True}, out)
with open(os.path.join(args.train_url, "done.txt"), "w") as out:
    out.write("done")
"""
SPEC = """\
name: perfjob
code: {dir: code, boot_file: train.py, obs: "obs://majob-demo/perfjob/code/"}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u, nodes: 1}
outputs:
  - {name: train_url, obs: "obs://majob-demo/perfjob/out/", local: out}
log: "obs://majob-demo/perfjob/logs/"
hyperparameters: {profile: 1}
"""


def _run_job(tmp_path: Path, profile: Profile, store: ObsObjectStore, *sets: str) -> str:
    (tmp_path / "code").mkdir(exist_ok=True)
    (tmp_path / "code" / "train.py").write_text(SCRIPT)
    (tmp_path / "spec.yaml").write_text(SPEC)
    spec = load_spec(tmp_path / "spec.yaml", overrides=list(sets), profile=profile)
    with open_service(profile) as service:
        job = Submitter(service, store, profile).submit(plan_submit(spec, "debug"))
        wait_until(lambda: service.get(job.id).finished, "the job ends", timeout=400)
        assert service.get(job.id).succeeded
    with Ledger() as ledger:
        record = ledger.start(
            spec_name=spec.name,
            stage="debug",
            spec_digest="d",
            code_digest="c",
            spec_json=normalised_spec(spec),
        )
        ledger.set_job(record, job.id)
    return job.id


@pytest.mark.slow
def test_a_jobs_profile_is_found_on_obs_and_diagnosed(
    tmp_path: Path, profile: Profile, store: ObsObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    job_id = _run_job(tmp_path, profile, store)
    result = CliRunner().invoke(
        app, ["perf", job_id, "--profile", "emulator", "--format", "json", "--no-msprof"]
    )
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert data["target"] == f"{job_id} (debug)"
    assert data["findings"][0]["key"] == "data_wait"


@pytest.mark.slow
def test_a_job_without_profiling_data_is_one_message(
    tmp_path: Path, profile: Profile, store: ObsObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    job_id = _run_job(tmp_path, profile, store, "hyperparameters.profile=0")
    result = CliRunner().invoke(app, ["perf", job_id, "--profile", "emulator", "--no-msprof"])
    assert result.exit_code == 2, result.output
    assert "no profiling data in its output" in result.output
    assert "Traceback" not in result.output
