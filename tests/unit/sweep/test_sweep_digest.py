"""The ``sweep:`` block is not part of the spec's digest: editing the search reopens no gate,
and a spec recorded before sweeps existed keeps its digest."""

from __future__ import annotations

from pathlib import Path

from majob.spec.digest import spec_digest
from majob.spec.load import load_spec

BASE = """\
name: tiny
code: {dir: code, boot_file: train.py}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u}
hyperparameters: {lr: 0.1}
metrics: {loss: 'loss=([0-9.]+)'}
"""

SWEEP = """\
sweep:
  space:
    lr: {float: [0.001, 1.0], log: true}
  objective: {metric: loss, goal: min}
  trials: TRIALS
"""


def test_the_sweep_block_leaves_the_spec_digest_alone(tmp_path: Path) -> None:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text("")
    digests = []
    for text in (BASE, BASE + SWEEP.replace("TRIALS", "4"), BASE + SWEEP.replace("TRIALS", "9")):
        path = tmp_path / "tiny.yaml"
        path.write_text(text)
        digests.append(spec_digest(load_spec(path)))
    assert len(set(digests)) == 1
