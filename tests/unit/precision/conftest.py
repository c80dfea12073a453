"""What the precision unit tests share: a small spec file with an empty script."""

from __future__ import annotations

from pathlib import Path

SPEC = """\
name: p
code: {dir: code, boot_file: train.py}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u}
outputs: [{name: train_url, obs: "obs://bkt/out/"}]
"""


def spec_file(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / "code").mkdir(exist_ok=True)
    (tmp_path / "code" / "train.py").write_text("")
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC + extra, encoding="utf-8")
    return path
