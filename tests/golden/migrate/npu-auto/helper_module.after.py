"""Helpers that move batches to the GPU (no torch import of their own)."""

from __future__ import annotations
import torch_npu
from torch_npu.contrib import transfer_to_npu


def to_device(batch):
    return [t.cuda(non_blocking=True) for t in batch]
