"""Trains on the GPU."""

import os

import torch
import torch_npu
import torch.distributed as dist


def main():
    dist.init_process_group(backend="hccl")
    device = torch.device("npu" if torch_npu.npu.is_available() else "cpu")
    model = torch.nn.Linear(3, 1).npu()
    x = torch.randn(4, 3, device="npu:0")
    if x.is_npu:
        torch_npu.npu.synchronize()
    print(os.getpid(), model(x.to(device)))


main()
