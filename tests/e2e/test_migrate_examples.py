"""The project's examples through ``majob check``, ``majob migrate`` and the local runner.

The migrated scripts really run: the laptop script after ``--to cloud-paths`` as a ModelArts job,
the GPU DDP script after ``--to npu-auto`` / ``npu-manual`` as an Ascend job on the CPU stand-in.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from majob.errors import NodeFailedError
from majob.migrate.checker import check_paths
from majob.migrate.rewrite import migrate_source
from majob.migrate.rules import Codemod, Severity, Target
from majob.runner.host import free_port
from majob.runner.local import run_local
from majob.spec.load import load_spec

ROOT = Path(__file__).resolve().parents[2]
# One thread per node process: the runs share two cores with the rest of the suite.
ONE_THREAD = "env.OMP_NUM_THREADS=1"
EXAMPLES = ROOT / "examples"
SPECS = ROOT / "job_specs"


def _rules(path: Path, target: Target) -> set[str]:
    return {f.rule for r in check_paths([path], target) for f in r.findings}


def test_ready_examples_have_no_errors() -> None:
    for path, target in [
        (EXAMPLES / "mnist" / "train.py", Target.GPU),
        (EXAMPLES / "ddp_resnet" / "train.py", Target.GPU),
        (EXAMPLES / "ddp_resnet_npu" / "train.py", Target.NPU),
    ]:
        findings = [f for r in check_paths([path], target) for f in r.findings]
        assert [f for f in findings if f.severity is Severity.ERROR] == [], path


def test_laptop_and_gpu_examples_are_flagged() -> None:
    assert {"MA101", "MA102", "MA103", "MA104"} <= _rules(
        EXAMPLES / "mnist_before" / "train.py", Target.GPU
    )
    assert {"MA301", "MA302", "MA304", "MA305"} <= _rules(
        EXAMPLES / "ddp_resnet" / "train.py", Target.NPU
    )


def _migrated_copy(example: str, codemod: Codemod, tmp_path: Path) -> Path:
    code = tmp_path / example
    shutil.copytree(EXAMPLES / example, code)
    train = code / "train.py"
    result, missed = migrate_source(train.read_text(encoding="utf-8"), codemod, "train.py")
    assert missed == []
    train.write_text(result, encoding="utf-8")
    return code


@pytest.mark.slow
def test_laptop_script_runs_as_a_job_after_cloud_paths(tmp_path: Path) -> None:
    overrides = [
        f"code.dir={EXAMPLES / 'mnist_before'}",
        "hyperparameters.epochs=1",
        f"outputs.train_url.local={tmp_path / 'out'}",
    ]
    spec = load_spec(SPECS / "mnist.yaml", overrides=overrides)
    with pytest.raises(NodeFailedError):  # parse_args() rejects --data_url
        run_local(spec, runs_dir=tmp_path / "runs", on_line=lambda _: None)

    code = _migrated_copy("mnist_before", Codemod.CLOUD_PATHS, tmp_path)
    spec = load_spec(SPECS / "mnist.yaml", overrides=[f"code.dir={code}", *overrides[1:]])
    lines: list[str] = []
    result = run_local(spec, runs_dir=tmp_path / "runs", on_line=lines.append)
    assert result.ok
    assert (tmp_path / "out" / "model.pth").is_file()  # written under --train_url, copied out
    assert result.findings == ()  # the guard saw no write outside the outputs


@pytest.mark.slow
@pytest.mark.parametrize("codemod", [Codemod.NPU_AUTO, Codemod.NPU_MANUAL])
def test_gpu_ddp_script_runs_as_an_ascend_job_on_the_standin(
    tmp_path: Path, codemod: Codemod
) -> None:
    code = _migrated_copy("ddp_resnet", codemod, tmp_path)
    assert "torch_npu" in (code / "train.py").read_text(encoding="utf-8")
    overrides = [
        f"code.dir={code}",
        ONE_THREAD,
        "hyperparameters.epochs=1",
        f"outputs.train_url.local={tmp_path / 'out'}",
        # One node gets no --init_method (ModelArts injects it only for multi-node jobs), so the
        # script would rendezvous on its default port 6666, which another run may hold.
        f"hyperparameters.init_method=tcp://127.0.0.1:{free_port()}",
    ]
    spec = load_spec(SPECS / "npu_resnet.yaml", overrides=overrides)
    lines: list[str] = []
    result = run_local(spec, nodes=1, runs_dir=tmp_path / "runs", on_line=lines.append)
    assert result.ok
    assert any("CPU STAND-IN" in line for line in lines)
    assert any(line.startswith("[majob] Ascend job on a host without torch_npu") for line in lines)
    metrics = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert metrics["world_size"] == 1


@pytest.mark.slow
def test_npu_example_spec_runs_locally_on_two_nodes(tmp_path: Path) -> None:
    overrides = [
        ONE_THREAD,
        "hyperparameters.epochs=1",
        f"outputs.train_url.local={tmp_path / 'out'}",
    ]
    spec = load_spec(SPECS / "npu_resnet.yaml", overrides=overrides)
    result = run_local(spec, runs_dir=tmp_path / "runs", on_line=lambda _: None)
    assert [n.exit_code for n in result.nodes] == [0, 0]
    record = json.loads(result.record.read_text())
    assert record["notices"][0].startswith("Ascend job on a host without torch_npu")
    assert any("operator support" in notice for notice in record["notices"])
    assert (tmp_path / "out" / "model.pth").is_file()


DATA_PARALLEL_SCRIPT = """\
import argparse
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--train_url", default="./out")
    args, _ = parser.parse_known_args()
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
    loader = DataLoader(dataset, batch_size=8, shuffle=True)
    model = nn.DataParallel(nn.Linear(4, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = 0
    for epoch in range(args.epochs):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            seen += len(y)
    print(f"samples seen: {seen}")
    torch.save(model.state_dict(), os.path.join(args.train_url, "model.pt"))


if __name__ == "__main__":
    main()
"""


@pytest.mark.slow
def test_data_parallel_script_trains_on_two_nodes_after_ddp(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    migrated, missed = migrate_source(DATA_PARALLEL_SCRIPT, Codemod.DDP, "train.py")
    assert missed == []
    (code / "train.py").write_text(migrated, encoding="utf-8")
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(
        "name: dp-to-ddp\ncode: {dir: code, boot_file: train.py}\n"
        "image: {engine: PyTorch, version: pytorch_1.8.0}\n"
        "resources: {flavor: modelarts.vm.cpu.8u, nodes: 2}\n"
        f"outputs: [{{name: train_url, obs: 'obs://bucket/out/', local: '{tmp_path / 'out'}'}}]\n"
        "distributed: {backend: gloo}\nenv: {OMP_NUM_THREADS: 1}\n"
    )
    lines: list[str] = []
    result = run_local(load_spec(spec_file), runs_dir=tmp_path / "runs", on_line=lines.append)
    assert result.ok
    # DistributedSampler halves each rank's share: 2 epochs x 32 samples, not 2 x 64
    assert sorted(line for line in lines if "samples seen" in line) == [
        "[worker-0] samples seen: 64",
        "[worker-1] samples seen: 64",
    ]
    import torch

    weights = torch.load(tmp_path / "out" / "model.pt")
    assert set(weights) == {"weight", "bias"}  # model.module's keys, saved once by rank 0
    assert result.findings == ()
