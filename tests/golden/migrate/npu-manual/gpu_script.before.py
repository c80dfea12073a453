"""Trains on the GPU."""

import os

import torch
import torch.distributed as dist


def main():
    dist.init_process_group(backend="nccl")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = torch.nn.Linear(3, 1).cuda()
    x = torch.randn(4, 3, device="cuda:0")
    if x.is_cuda:
        torch.cuda.synchronize()
    print(os.getpid(), model(x.to(device)))


main()
