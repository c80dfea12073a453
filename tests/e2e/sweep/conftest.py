"""A project whose trial script needs no torch: its loss depends on ``--x`` (best near 0.3),
one line per epoch, so trials start in well under a second on the emulated cloud of
``tests/e2e/conftest.py``. ``--mode crash`` exits 3 after its first epoch; ``--mode quiet``
never prints the metric; ``--pause`` sleeps after each epoch (a trial caught running);
``--release PATH`` waits at the end until that file exists and ``--hang_above X`` for ever when
``--x`` is above X (a diverging trial that only a stop ends): the test, not the clock, decides
when such a trial ends."""

from __future__ import annotations

from pathlib import Path

import pytest

SCRIPT = """\
import argparse, os, sys, time
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
parser.add_argument("--x", type=float, default=0.5)
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--pause", type=float, default=0)
parser.add_argument("--mode", default="ok")
parser.add_argument("--release", default="")
parser.add_argument("--hang_above", type=float, default=float("inf"))
args, _ = parser.parse_known_args()
for epoch in range(args.epochs):
    loss = (args.x - 0.3) ** 2 + 1.0 / (epoch + 1)
    if args.mode != "quiet":
        print(f"epoch {epoch} loss={loss:.6f}", flush=True)
    if args.mode == "crash":
        print("boom: a bad value", flush=True)
        sys.exit(3)
    deadline = time.monotonic() + args.pause
    while time.monotonic() < deadline:
        time.sleep(0.05)
while (args.release and not os.path.exists(args.release)) or args.x > args.hang_above:
    time.sleep(0.05)
with open(os.path.join(args.train_url, "model.pth"), "w") as out:
    out.write("weights")
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
hyperparameters: {{x: 0.5, epochs: 2, pause: 0, mode: ok}}
metrics: {{loss: 'loss=([0-9.]+)'}}
sweep:
{sweep}
"""

SWEEP = """\
  space:
    x: {float: [0.0, 1.0]}
  objective: {metric: loss, goal: min}
  trials: 4
  parallel: 2
  seed: 7
"""


def write_spec(root: Path, name: str = "swept", sweep: str = SWEEP, extra: str = "") -> Path:
    path = root / f"{name}.yaml"
    path.write_text(SPEC.format(name=name, sweep=sweep.rstrip("\n")) + extra)
    return path


def lay_out(root: Path, name: str = "swept", sweep: str = SWEEP, extra: str = "") -> Path:
    """The project's code and data under ``root``, and its spec (the path written)."""
    (root / "code").mkdir(parents=True, exist_ok=True)
    (root / "code" / "train.py").write_text(SCRIPT)
    (root / "data").mkdir(exist_ok=True)
    (root / "data" / "in.txt").write_text("1")
    return write_spec(root, name=name, sweep=sweep, extra=extra)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project, as the current directory (the ledger and sweeps are in ./.majob/)."""
    root = tmp_path / "project"
    lay_out(root)
    monkeypatch.chdir(root)
    monkeypatch.delenv("MAJOB_LEDGER")  # the default: this directory's own
    return root
