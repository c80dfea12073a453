"""The MNIST example swept over its learning rate on the emulator: 4 trials, 2 at once, each a
real training job (one epoch of the bundled digits), and the better region found."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.emulator.cloud import EmulatedCloud
from majob.sweep.run import Sweep

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

# Seed 5 draws lr = 6.6e-05, 0.017, 5.8e-05, 0.025: two trials in each region.
SPEC = """\
name: mnist-sweep
code: {{dir: {code}, boot_file: train.py, obs: "obs://majob-demo/mnist-sweep/code/"}}
image: {{engine: PyTorch, version: pytorch_2.1.0-cuda_12.1-py_3.10.6-ubuntu_22.04-x86_64}}
resources: {{flavor: modelarts.vm.cpu.8u}}
inputs:
  - {{name: data_url, obs: "obs://majob-demo/mnist-sweep/data/", local: {data}}}
outputs:
  - {{name: train_url, obs: "obs://majob-demo/mnist-sweep/out/", local: out}}
hyperparameters: {{epochs: 1, lr: 0.01, batch_size: 32}}
metrics:
  accuracy: 'epoch \\d+: .*test accuracy ([0-9.]+)'
sweep:
  space:
    lr: {{float: [0.00001, 0.05], log: true}}
  objective: {{metric: accuracy, goal: max}}
  trials: 4
  parallel: 2
  seed: 5
"""


@pytest.mark.slow  # torch in five processes: the local smoke and four trials
def test_mnist_lr_sweep_finds_the_better_region(
    tmp_path: Path, cloud: EmulatedCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "mnist-sweep.yaml"
    spec.write_text(SPEC.format(code=EXAMPLES / "mnist", data=EXAMPLES / "data"))
    lines: list[str] = []
    result = Sweep(spec, profile="emulator", upload_inputs=True, report=lines.append).run()
    assert [r.state for r in result.rows] == ["completed"] * 4, lines
    low = [r for r in result.rows if float(r.params["lr"]) < 1e-4]
    high = [r for r in result.rows if float(r.params["lr"]) > 1e-2]
    assert len(low) == 2 and len(high) == 2  # the seed's draws
    # One epoch of Adam: the high learning rates learn, the tiny ones barely move.
    assert min(r.objective or 0 for r in high) > max(r.objective or 0 for r in low)
    assert result.best in high
