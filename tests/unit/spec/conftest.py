from __future__ import annotations

from pathlib import Path

import pytest

from majob.errors import SpecError
from majob.spec.load import load_spec

GOOD = """\
name: demo
code:
  dir: code
  boot_file: train.py
  obs: obs://my-bucket/majob/demo/code/
image:
  engine: PyTorch
  version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64
resources:
  flavor: modelarts.vm.cpu.8u
inputs:
  - name: data_url
    obs: obs://my-bucket/data/
    local: data
outputs:
  - name: train_url
    obs: obs://my-bucket/out/
    local: out
hyperparameters:
  epochs: 2
  lr: 0.001
  amp: false
  arch: resnet18
stages:
  local:
    nodes: 2
    hyperparameters: {epochs: 1}
    timeout: 10m
  debug:
    flavor: modelarts.vm.cpu.2u
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory with a valid spec (spec.yaml), its code and its local data."""
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text("print('hi')\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "spec.yaml").write_text(GOOD)
    config = tmp_path / "config"
    config.mkdir()
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(config))
    monkeypatch.delenv("MAJOB_PROFILE", raising=False)
    return tmp_path


def spec_problems(path: Path) -> list[str]:
    """``line:col path: message`` of each problem loading ``path`` finds (it must find one)."""
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    return [f"{p.line}:{p.col} {p.path}: {p.message}" for p in caught.value.problems]
