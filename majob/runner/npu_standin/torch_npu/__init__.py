"""majob's CPU STAND-IN for ``torch_npu`` -- not Huawei's package, and no NPU is used.

Importing it prints one banner line to stderr and patches torch so that code written for Ascend
runs on the CPU: ``'npu'`` devices become ``'cpu'``, the ``hccl`` (and ``nccl``) backend becomes
``gloo``, ``torch.npu`` / ``torch_npu.npu`` answer like one available device, and
``torch_npu.contrib.transfer_to_npu`` does nothing (so CUDA code takes its CPU branch).
"""

from __future__ import annotations

import sys

from . import npu
from ._patch import BANNER, install

__version__ = "0.0.0+majob.cpu.standin"
__majob_standin__ = True

install(npu)
sys.stderr.write(BANNER + "\n")
sys.stderr.flush()

__all__ = ["npu"]
