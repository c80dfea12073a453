"""Helpers that move batches to the GPU (no torch import of their own)."""

from __future__ import annotations


def to_device(batch):
    return [t.cuda(non_blocking=True) for t in batch]
