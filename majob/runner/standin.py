"""When and how a run of Ascend code uses the CPU stand-in for ``torch_npu``.

A runner calls ``npu_standin_for(wants_npu, python)`` once per run: when the job targets Ascend
and its interpreter cannot find a real ``torch_npu``, it gets the directory to prepend to every
node's ``PYTHONPATH`` and the notices to print and record. Whether a job targets Ascend is the
caller's to say (the local stage reads its spec, the emulator its create body).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path

STANDIN_DIR = Path(__file__).resolve().parent / "npu_standin"

CPU_CANNOT_VERIFY: tuple[str, ...] = (
    "operator support: whether every operator exists on Ascend (run `majob check --target npu`, "
    "then the debug stage on a real NPU)",
    "numerical precision: fp16/bf16 behaviour, the fp64-to-fp32 mapping, NPU kernel accuracy",
    "performance: speed, memory use, graph compilation, data-loader throughput on the NPU host",
    "HCCL collectives: gloo stands in for hccl, so HCCL topology and timeouts are not exercised",
    "mixed precision: the stand-in's autocast is off and its GradScaler passes values through",
)


@dataclass(frozen=True)
class NpuStandIn:
    """What the runner adds for a run: PYTHONPATH entries (first) and notices to show and keep."""

    pythonpath: tuple[str, ...] = ()
    notices: tuple[str, ...] = field(default_factory=tuple)

    @property
    def active(self) -> bool:
        return bool(self.pythonpath)


def has_real_torch_npu(python: str) -> bool:
    """``python`` can find a ``torch_npu`` package of its own (found, not imported: importing the
    real one without NPU drivers fails)."""
    probe = (
        "import importlib.util, sys\n"
        "sys.exit(0 if importlib.util.find_spec('torch_npu') is not None else 1)\n"
    )
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def npu_standin_for(wants_npu: bool, python: str) -> NpuStandIn:
    """The stand-in for a run that ``wants_npu`` with interpreter ``python``, or an inactive
    one."""
    if not wants_npu or has_real_torch_npu(python):
        return NpuStandIn()
    notices = (
        "Ascend job on a host without torch_npu: running on the CPU with majob's torch_npu "
        f"stand-in ({STANDIN_DIR.name}: npu -> cpu, hccl -> gloo, transfer_to_npu a no-op)",
        *(f"not verified on CPU: {item}" for item in CPU_CANNOT_VERIFY),
    )
    return NpuStandIn((str(STANDIN_DIR),), notices)
