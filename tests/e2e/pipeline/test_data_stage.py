"""``majob data stage`` on the emulated cloud: a transfer job on the pool copies an OBS folder
onto an SFS Turbo share with majob's own engine (shipped as the job's code, reading OBS with the
job's temporary credentials), the ledger records the verified copy, the next stage of the
unchanged source runs no job, and a 2-node job reads the data from the share on every node. A
share that fills mid-copy fails the job and records nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator import sfs
from majob.emulator.cloud import EmulatedCloud
from majob.emulator.defaults import EMULATOR_PROJECT_ID
from majob.pipeline.data_stages import last_data_stage
from majob.pipeline.ledger import Ledger
from majob.storage.obs import ObsObjectStore

runner = CliRunner()
SERVER = "192.168.0.9"
TARGET = f"sfs://{SERVER}/datasets/digits"
SOURCE = "obs://majob-demo/big/digits/"

# The emulator cannot mount at /mnt/data without root: the mount point reaches the script as a
# hyperparameter, which the emulator (and the local stage) translate to the share's folder.
READER = """\
import argparse, os
parser = argparse.ArgumentParser()
parser.add_argument("--data")
args, _ = parser.parse_known_args()
task = os.environ["VC_TASK_INDEX"]
names = sorted(os.listdir(os.path.join(args.data, "sub")))
text = open(os.path.join(args.data, "a.txt")).read()
print(f"task {task} reads {text} and {names}", flush=True)
"""

READER_SPEC = f"""\
name: reader
code: {{dir: reader, boot_file: read.py, obs: "obs://majob-demo/reader/code/"}}
image: {{engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}}
resources: {{pool: pool-cpu, nodes: 2}}
volumes:
  - {{nfs: "{SERVER}:/datasets/digits", mount: /mnt/data, local: data}}
log: "obs://majob-demo/reader/logs/"
hyperparameters: {{data: /mnt/data}}
"""


def _put_source(store: ObsObjectStore) -> None:
    store.put_bytes("majob-demo", "big/digits/a.txt", b"seven")
    store.put_bytes("majob-demo", "big/digits/sub/b.bin", b"x" * 3000)
    store.put_bytes("majob-demo", "big/digits/sub/c.bin", b"y" * 5000)


def _stage(*more: str) -> list[str]:
    return ["data", "stage", SOURCE, TARGET, "--pool", "pool-cpu", "--profile", "emulator", *more]


def test_a_stage_fills_the_share_once_and_every_node_of_a_job_reads_it(
    project: Path, cloud: EmulatedCloud, store: ObsObjectStore
) -> None:
    _put_source(store)
    first = runner.invoke(app, _stage())
    assert first.exit_code == 0, first.output
    assert "staged and verified: 3 files (7.8 KiB)" in first.output
    assert "(copied 3 (7.8 KiB), kept 0)" in first.output
    share = sfs.volume_dir(cloud.state_dir, f"{SERVER}:/datasets/digits")
    assert (share / "a.txt").read_bytes() == b"seven"
    assert (share / "sub" / "c.bin").read_bytes() == b"y" * 5000
    assert (share / ".majob-stage.json").is_file()
    with Ledger() as ledger:
        recorded = last_data_stage(ledger, SOURCE, TARGET)
    assert recorded is not None and (recorded.files, recorded.bytes) == (3, 8005)

    again = runner.invoke(app, _stage())
    assert again.exit_code == 0, again.output
    assert "unchanged since job" in again.output and "transfer job" not in again.output

    (project / "reader").mkdir()
    (project / "reader" / "read.py").write_text(READER)
    (project / "data").mkdir(exist_ok=True)
    (project / "reader.yaml").write_text(READER_SPEC)
    read = runner.invoke(app, ["submit", "reader.yaml", "--profile", "emulator", "--wait"])
    assert read.exit_code == 0, read.output
    for task in (0, 1):
        assert f"task {task} reads seven and ['b.bin', 'c.bin']" in read.output

    listed = runner.invoke(app, ["checklist", "reader.yaml", "--profile", "emulator"])
    assert f"staged from {SOURCE} (3 files" in listed.output, listed.output


def test_a_share_that_fills_mid_copy_fails_the_stage_and_records_nothing(
    project: Path, cloud: EmulatedCloud, store: ObsObjectStore
) -> None:
    _put_source(store)
    sfs.set_quota(cloud.state_dir, f"{SERVER}:/", 4000)
    full = runner.invoke(app, _stage())
    assert full.exit_code != 0, full.output
    assert "the transfer job" in full.output and "Traceback" not in full.output
    assert "nothing is recorded as staged" in full.output
    with Ledger() as ledger:
        assert last_data_stage(ledger, SOURCE, TARGET) is None


def test_bad_targets_and_an_empty_source_are_one_message_each(
    project: Path, cloud: EmulatedCloud
) -> None:
    root = runner.invoke(app, ["data", "stage", SOURCE, f"sfs://{SERVER}/", "--pool", "p"])
    assert root.exit_code == 2 and "has no path part" in root.output
    bad = runner.invoke(app, ["data", "stage", SOURCE, "/mnt/sfs/x", "--pool", "p"])
    assert bad.exit_code == 2 and "is not an SFS Turbo folder" in bad.output
    empty = runner.invoke(app, _stage())
    assert empty.exit_code == 2 and "holds no objects: nothing to stage" in empty.output


def test_wrong_credentials_are_one_message_and_submit_no_job(
    project: Path, cloud: EmulatedCloud, store: ObsObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    _put_source(store)
    config = Path(os.environ["MAJOB_CONFIG_DIR"])
    config.mkdir(parents=True, exist_ok=True)
    (config / "profiles.yaml").write_text(
        f"wrong:\n  region: cn-north-4\n  project_id: '{EMULATOR_PROJECT_ID}'\n"
        f"  obs_endpoint: {cloud.endpoints.obs}\n  modelarts_endpoint: {cloud.endpoints.modelarts}\n"
    )
    monkeypatch.setenv("HUAWEICLOUD_SDK_AK", "MAJOBWRONGACCESSKEY0")
    monkeypatch.setenv("HUAWEICLOUD_SDK_SK", "not-the-secret-at-all-0123456789")
    args = ["data", "stage", SOURCE, TARGET, "--pool", "pool-cpu", "--profile", "wrong"]
    refused = runner.invoke(app, args)
    assert refused.exit_code != 0 and "Traceback" not in refused.output
    assert "not-the-secret-at-all" not in refused.output
    assert "access key" in refused.output.lower(), refused.output
    listed = runner.invoke(app, ["list", "--profile", "emulator"])
    assert "majob-stage" not in listed.output
