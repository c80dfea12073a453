"""A small project to submit to the emulated cloud of ``tests/e2e/conftest.py``, and the
ModelArts client for it.

The clients are the real ones: ``huaweicloudsdkmodelarts`` and esdk-obs-python, reached through
the built-in ``emulator`` profile exactly as ``majob submit --profile emulator`` reaches them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from majob.service.connect import open_service
from majob.service.rest import RestTrainingService
from majob.spec.profiles import Profile

BUCKET = "majob-demo"

# A tiny job: no torch, so it starts in well under a second. It copies its input to its
# output, prints a few lines, and sleeps or fails when told to.
SCRIPT = """\
import argparse, os, sys, time
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
parser.add_argument("--sleep", type=float, default=0)
parser.add_argument("--fail", type=int, default=0)
args, _ = parser.parse_known_args()
print("task", os.environ.get("VC_TASK_INDEX"), "starts", flush=True)
with open(os.path.join(args.data_url, "in.txt")) as source:
    payload = source.read()
with open(os.path.join(args.train_url, "out.txt"), "w") as out:
    out.write(payload.upper())
for step in range(3):
    print(f"step {step}", flush=True)
deadline = time.monotonic() + args.sleep
while time.monotonic() < deadline:
    time.sleep(0.05)
if args.fail:
    print("about to fail", flush=True)
    sys.exit(args.fail)
print("done", flush=True)
"""

SPEC = """\
name: tiny
code: {dir: code, boot_file: train.py, obs: "obs://majob-demo/tiny/code/"}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u, nodes: 1}
inputs:
  - {name: data_url, obs: "obs://majob-demo/tiny/data/", local: data}
outputs:
  - {name: train_url, obs: "obs://majob-demo/tiny/out/", local: out}
log: "obs://majob-demo/tiny/logs/"
hyperparameters: {sleep: 0}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "code").mkdir(parents=True)
    (root / "code" / "train.py").write_text(SCRIPT)
    (root / "data").mkdir()
    (root / "data" / "in.txt").write_text("payload")
    (root / "spec.yaml").write_text(SPEC)
    return root


@pytest.fixture
def service(profile: Profile) -> Iterator[RestTrainingService]:
    with open_service(profile) as opened:
        yield opened
