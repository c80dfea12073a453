"""The CPU stand-in for torch_npu: when the runner uses it, and that NPU code really runs on it."""

from __future__ import annotations

import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from majob.runner.checks import wants_npu
from majob.runner.standin import (
    CPU_CANNOT_VERIFY,
    STANDIN_DIR,
    NpuStandIn,
    has_real_torch_npu,
    npu_standin_for,
)
from majob.spec.load import load_spec

SPECS = Path(__file__).resolve().parents[3] / "job_specs"


def standin_for_spec(name: str) -> NpuStandIn:
    """The stand-in the local stage gives the example spec ``name``."""
    return npu_standin_for(wants_npu(load_spec(SPECS / name)), sys.executable)


def test_ascend_spec_without_torch_npu_gets_the_standin() -> None:
    standin = standin_for_spec("npu_resnet.yaml")
    assert standin.active
    assert standin.pythonpath == (str(STANDIN_DIR),)
    assert (STANDIN_DIR / "torch_npu" / "__init__.py").is_file()
    assert "stand-in" in standin.notices[0]
    assert len(standin.notices) == 1 + len(CPU_CANNOT_VERIFY)
    joined = " ".join(standin.notices)
    for topic in ("operator support", "precision", "performance"):
        assert topic in joined


def test_gpu_spec_gets_nothing() -> None:
    standin = standin_for_spec("mnist.yaml")
    assert not standin.active and standin.notices == ()


def test_a_real_torch_npu_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert not has_real_torch_npu(sys.executable)
    (tmp_path / "torch_npu").mkdir()
    (tmp_path / "torch_npu" / "__init__.py").write_text("raise ImportError('no driver')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    assert has_real_torch_npu(sys.executable)  # found, not imported: no driver needed
    assert not standin_for_spec("npu_resnet.yaml").active


def test_missing_interpreter_is_no_real_torch_npu(tmp_path: Path) -> None:
    assert not has_real_torch_npu(str(tmp_path / "no-python"))


NPU_SCRIPT = """
import sys
import torch
import torch_npu
from torch_npu.contrib import transfer_to_npu
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

port = int(sys.argv[1])
dist.init_process_group("hccl", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
assert dist.get_backend() == "gloo"
torch.npu.set_device(0)
device = torch.device("npu:0")
model = DistributedDataParallel(torch.nn.Linear(3, 1).npu(), device_ids=[0])
x = torch.randn(4, 3, device="npu").to(device)
scaler = torch_npu.npu.amp.GradScaler()
with torch.npu.amp.autocast():
    loss = model(x).sum()
scaler.scale(loss).backward()
assert x.is_npu and x.device.type == "cpu" and torch.npu.is_available()
print("ran", torch_npu.__version__, torch.npu.device_count())
dist.destroy_process_group()
"""


@pytest.mark.slow
def test_npu_script_runs_on_cpu_with_a_banner(tmp_path: Path) -> None:
    script = tmp_path / "npu_train.py"
    script.write_text(textwrap.dedent(NPU_SCRIPT))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = subprocess.run(
        [sys.executable, str(script), str(port)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(STANDIN_DIR), "PATH": "/usr/bin:/bin"},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ran 0.0.0+majob.cpu.standin 1\n"
    banner = [line for line in done.stderr.splitlines() if "STAND-IN" in line]
    assert banner == [
        "majob: torch_npu here is a CPU STAND-IN (npu -> cpu, hccl -> gloo, transfer_to_npu "
        "no-op); operator support, precision and performance are NOT verified"
    ]
