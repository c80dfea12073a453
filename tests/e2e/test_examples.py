"""The examples through the local stage, as a user runs them (these import torch: slow)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from majob.runner.local import run_local
from majob.spec.load import load_spec

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "job_specs"


@pytest.mark.parametrize("name", ["mnist", "ddp_resnet", "npu_resnet", "custom_image"])
def test_example_specs_load(name: str) -> None:
    spec = load_spec(SPECS / f"{name}.yaml")
    assert (Path(spec.code.dir) / spec.code.boot_file).is_file()
    if name == "npu_resnet":
        assert spec.is_ascend and spec.distributed and spec.distributed.backend == "hccl"


@pytest.mark.slow
def test_mnist_demo_reaches_its_accuracy_and_writes_model_pth(tmp_path: Path) -> None:
    """What `make demo` runs, as a real process."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "majob",
            "run",
            str(SPECS / "mnist.yaml"),
            "--stage",
            "local",
            "--set",
            f"outputs.train_url.local={tmp_path / 'out'}",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--strict",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "[worker-0] final test accuracy" in done.stdout
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["test_accuracy"] >= 0.9
    import torch

    weights = torch.load(tmp_path / "out" / "model.pth")
    assert {"conv.weight", "fc2.bias"} <= set(weights)


@pytest.mark.slow
@pytest.mark.parametrize("nodes", [2, 4])
def test_ddp_resnet_on_local_nodes(tmp_path: Path, nodes: int) -> None:
    spec = load_spec(
        SPECS / "ddp_resnet.yaml", overrides=[f"outputs.train_url.local={tmp_path / 'out'}"]
    )
    lines: list[str] = []
    result = run_local(spec, nodes=nodes, runs_dir=tmp_path / "runs", on_line=lines.append)
    assert [n.exit_code for n in result.nodes] == [0] * nodes
    assert any(line.startswith("[worker-0] final test accuracy") for line in lines)
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics == {"test_accuracy": metrics["test_accuracy"], "world_size": nodes}
    assert metrics["test_accuracy"] >= 0.8
    import torch

    weights = torch.load(tmp_path / "out" / "model.pth")
    assert not any(key.startswith("module.") for key in weights)  # model.module was saved
    assert result.findings == ()


@pytest.mark.slow
def test_guard_sees_torch_save_outside_the_outputs(tmp_path: Path) -> None:
    """torch.save writes from C++ without an audit event; the guard wraps its writer."""
    code = tmp_path / "code"
    code.mkdir()
    (code / "train.py").write_text(
        "import os, torch\n"
        "torch.save({'w': torch.zeros(1)}, 'model.pth')\n"
        "torch.save({'w': torch.zeros(1)}, os.path.join(os.environ['OUT'], 'kept.pth'))\n"
    )
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(
        "name: save\ncode: {dir: code, boot_file: train.py}\n"
        "image: {engine: PyTorch, version: pytorch_1.8.0}\n"
        "resources: {flavor: modelarts.vm.cpu.8u}\n"
        "outputs: [{name: OUT, obs: 'obs://bucket/out/', access_method: env}]\n"
    )
    result = run_local(load_spec(spec_file), runs_dir=tmp_path / "runs", on_line=lambda _: None)
    assert [(f.kind, Path(f.path).name, f.where) for f in result.findings] == [
        ("write", "model.pth", f"{code / 'train.py'}:2")
    ]
    assert (result.output_dir("OUT") / "kept.pth").is_file()
