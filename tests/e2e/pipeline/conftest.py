"""A small project whose script needs no torch, so each stage's job starts in well under a
second, on the emulated cloud of ``tests/e2e/conftest.py``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BUCKET = "majob-demo"
DEADLINE = 120.0  # for a job or a majob to get somewhere, on a loaded 2-core machine


def start_majob(*args: str) -> subprocess.Popen[str]:
    """``majob ARGS`` in its own process group (killed whole, as a lost session is), its
    output unbuffered and merged, read line by line as it comes."""
    return subprocess.Popen(
        [sys.executable, "-m", "majob", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        start_new_session=True,
    )


# Halves its loss each epoch; sleeps when told (to be caught while running); fails when told.
SCRIPT = """\
import argparse, os, sys, time
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--sleep", type=float, default=0)
parser.add_argument("--fail", type=int, default=0)
args, _ = parser.parse_known_args()
with open(os.path.join(args.data_url, "in.txt")) as source:
    scale = float(source.read())
loss = scale
for epoch in range(args.epochs):
    loss /= 2
    print(f"epoch {epoch} loss={loss}", flush=True)
deadline = time.monotonic() + args.sleep
while time.monotonic() < deadline:
    time.sleep(0.05)
if args.fail:
    sys.exit(args.fail)
with open(os.path.join(args.train_url, "model.pth"), "w") as out:
    out.write(str(loss))
print("done", flush=True)
"""

SPEC = """\
name: {name}
code: {{dir: code, boot_file: train.py, obs: "obs://majob-demo/{name}/code/"}}
image: {{engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}}
resources: {{flavor: modelarts.vm.cpu.8u, nodes: 1}}
inputs:
  - {{name: data_url, obs: "obs://majob-demo/{name}/data/", local: data}}
outputs:
  - {{name: train_url, obs: "obs://majob-demo/{name}/out/", local: out}}
log: "obs://majob-demo/{name}/logs/"
hyperparameters: {{lr: 0.1, sleep: 0}}
metrics: {{loss: 'loss=([0-9.]+)'}}
expect:
  outputs: [model.pth]
  metrics: {{loss: '< 1.5'}}
stages:
  debug: {{hyperparameters: {{epochs: 1}}}}
"""


def write_spec(root: Path, name: str = "tiny", extra: str = "") -> Path:
    path = root / f"{name}.yaml"
    path.write_text(SPEC.format(name=name) + extra)
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project, as the current directory (the ledger is ./.majob/ledger.db)."""
    root = tmp_path / "project"
    (root / "code").mkdir(parents=True)
    (root / "code" / "train.py").write_text(SCRIPT)
    (root / "data").mkdir()
    (root / "data" / "in.txt").write_text("2.0")
    write_spec(root)
    monkeypatch.chdir(root)
    monkeypatch.delenv("MAJOB_LEDGER")  # the default: this directory's own
    return root
