"""The migration checklist from majob check, the spec and the ledger."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.pipeline.checklist import Item, checklist
from majob.pipeline.digests import Fingerprint
from majob.pipeline.ledger import Ledger
from majob.precision.record import save_check
from majob.spec.load import load_spec

UNMIGRATED = """\
import torch
model = torch.nn.Linear(2, 2)
model = torch.nn.DataParallel(model).cuda()
data = open("/home/user/data/train.csv").read()
torch.save(model.state_dict(), "/home/user/out/model.pth")
"""
MIGRATED = """\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
args, _ = parser.parse_known_args()
print(args.data_url)
"""
SPEC = """\
name: tiny
code: {dir: code, boot_file: train.py}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u}
inputs: [{name: data_url, obs: "obs://b-1/data/", local: data}]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "code").mkdir()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.bin").write_bytes(b"0" * 2_000_000)
    (tmp_path / "spec.yaml").write_text(SPEC)
    return tmp_path


def items(project: Path, *overrides: str) -> dict[str, Item]:
    spec = load_spec(project / "spec.yaml", overrides=overrides)
    return {item.key: item for item in checklist(spec, Ledger(project / "ledger.db"))}


def test_unmigrated_multi_card_npu_code_has_its_work_listed(project: Path) -> None:
    (project / "code" / "train.py").write_text(UNMIGRATED)
    got = items(
        project,
        "resources.flavor=modelarts.bm.snt9b.4",
        "image.engine=Ascend-Powered-Engine",
        "image.version=pytorch_2.1.0-cann_8.0-py_3.9-euler_2.10-aarch64",
        "resources.nodes=2",
    )
    assert got["paths"].status == "todo"
    assert got["paths"].detail == "2 path findings: train.py:4 MA101, train.py:5 MA102"
    assert got["ddp"].status == "todo"
    assert got["ddp"].detail.startswith(
        "2 nodes x 4 cards; 2 distributed findings: train.py:3 MA201"
    )
    assert got["npu"].status == "todo" and "MA305" in got["npu"].detail
    assert got["manual"].status == "todo" and "MA201" in got["manual"].detail
    assert (
        got["image"].status == "not checked" and got["image"].todo == "run `majob image check-env`"
    )
    assert got["precision"].status == "not checked"
    assert got["stages"].status == "todo"
    assert got["data"].status == "not checked" and "data_url (2 MB here)" in got["data"].detail


def test_migrated_single_card_code_is_done_or_not_needed(project: Path) -> None:
    (project / "code" / "train.py").write_text(MIGRATED)
    got = items(project)
    assert {key: item.status for key, item in got.items()} == {
        "paths": "done",
        "image": "todo",  # the engine's Python 3.7 is not this one
        "data": "not checked",  # no OBS to plan from
        "ddp": "not needed",
        "npu": "not needed",
        "resume": "not needed",  # no fault_tolerance: ModelArts does not restart the job
        "manual": "done",
        "precision": "not checked",
        "perf": "todo",
        "stages": "todo",
    }


def test_the_ledger_feeds_the_stage_and_precision_items(project: Path) -> None:
    (project / "code" / "train.py").write_text(MIGRATED)
    spec = load_spec(project / "spec.yaml")
    fp = Fingerprint.of(spec)
    with Ledger(project / "ledger.db") as ledger:
        for stage in ("local", "debug"):
            record_id = ledger.start(
                spec_name="tiny",
                stage=stage,
                spec_digest=fp.spec_digest,
                code_digest=fp.code_digest,
            )
            ledger.finish(record_id, result="passed", metrics={"worker-0": {"loss": [0.25]}})
    got = items(project)
    assert got["stages"].detail == "passed for this code and spec: local, debug"
    assert got["stages"].todo == "majob pipeline SPEC (runs formal)"  # no path given
    named = checklist(spec, Ledger(project / "ledger.db"), "job_specs/tiny.yaml")
    todo = {item.key: item.todo for item in named}
    assert todo["stages"] == "majob pipeline job_specs/tiny.yaml (runs formal)"
    assert todo["precision"].startswith("majob run job_specs/tiny.yaml --dump ")
    assert got["precision"].detail == "the debug stage passed for this code (#2, loss 0.25)"


def test_the_image_item_is_majob_image_check_envs_verdict(project: Path) -> None:
    # The spec's preset engine has Python 3.7; this interpreter is 3.10 or newer.
    (project / "code" / "train.py").write_text(MIGRATED)
    spec = load_spec(project / "spec.yaml")
    (image,) = [
        i for i in checklist(spec, Ledger(project / "ledger.db"), "spec.yaml") if i.key == "image"
    ]
    assert image.status == "todo"
    assert image.detail.startswith("PyTorch pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64: ")
    assert "Python" in image.detail and "3.7" in image.detail
    assert image.todo


def test_the_precision_item_is_the_last_compare_recorded_for_the_spec(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)  # majob compare records its verdict under ./.majob/precision
    (project / "code" / "train.py").write_text(MIGRATED)
    save_check("tiny", verdict="fail", golden="run-a", target="run-b", problems=["lr differs"])
    assert items(project)["precision"].status == "todo"
    assert "lr differs" in items(project)["precision"].detail
    save_check("tiny", verdict="pass", golden="run-a", target="run-c", problems=[])
    precision = items(project)["precision"]
    assert precision.status == "done" and "run-a run-c: pass" in precision.detail


SAVES_EVERY_EPOCH = """\
import argparse, os, torch
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
args, _ = parser.parse_known_args()
model = torch.nn.Linear(2, 2)
for epoch in range(10):
    torch.save(model.state_dict(), os.path.join(args.train_url, "ckpt", f"epoch{epoch}.pt"))
"""
RESUMES = """\
import argparse, glob, os, torch
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
args, _ = parser.parse_known_args()
model = torch.nn.Linear(2, 2)
folder = os.path.join(args.train_url, "ckpt")
start = 0
found = sorted(glob.glob(os.path.join(folder, "*.pt")))
if found:
    state = torch.load(found[-1])
    model.load_state_dict(state["model"])
    start = state["epoch"] + 1
for epoch in range(start, 10):
    path = os.path.join(folder, f"epoch{epoch}.pt")
    torch.save({"model": model.state_dict(), "epoch": epoch}, path + ".tmp")
    os.replace(path + ".tmp", path)
"""
OUTPUTS = 'outputs: [{name: train_url, obs: "obs://b-1/out/"}]'


@pytest.mark.parametrize(
    ("script", "block", "status", "said"),
    [
        (SAVES_EVERY_EPOCH, "", "not needed", "no fault_tolerance.retries"),
        (SAVES_EVERY_EPOCH, "{retries: 2}", "todo", "no fault_tolerance.checkpoints"),
        (
            SAVES_EVERY_EPOCH,
            "{retries: 2, checkpoints: train_url/ckpt/}",
            "todo",
            "2 resume findings: train.py:8 MA401, train.py:8 MA403",
        ),
        (RESUMES, "{retries: 2, checkpoints: train_url/ckpt/}", "done", "(1 save call)"),
        (MIGRATED, "{retries: 2, checkpoints: train_url/ckpt/}", "todo", "no checkpoint saved"),
    ],
)
def test_a_job_modelarts_may_restart_must_resume(
    project: Path, script: str, block: str, status: str, said: str
) -> None:
    (project / "code" / "train.py").write_text(script)
    spec = (project / "spec.yaml").read_text() + OUTPUTS + "\n"
    if block:
        spec += f"fault_tolerance: {block}\n"
    (project / "spec.yaml").write_text(spec)
    item = items(project)["resume"]
    assert (item.status, item.title) == (status, "resumes after a restart")
    assert said in item.detail, item.detail
    assert bool(item.todo) == (status == "todo")
