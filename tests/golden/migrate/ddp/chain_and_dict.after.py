import argparse
import atexit

import torch
from torch.nn.parallel import DistributedDataParallel
import torch.distributed as dist
import torch.nn as nn


def save_checkpoint(state, filename="checkpoint.pth.tar"):
    if not dist.is_initialized() or dist.get_rank() == 0:
        torch.save(state, filename)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--world_size", type=int, default=1)
    parser.add_argument("--init_method", type=str, default=None)
    parser.add_argument("--rank", type=int, default=0)
    args = parser.parse_args()
    if args.world_size > 1:
        dist.init_process_group(
            backend="nccl" if torch.cuda.is_available() else "gloo",
            init_method=args.init_method,
            rank=args.rank,
            world_size=args.world_size,
        )
        # Leave the group before Python exits: a rank that exits in it can
        # die of SIGABRT.
        atexit.register(lambda: dist.is_initialized() and dist.destroy_process_group())
    model = nn.Linear(8, 8)
    model = model.cuda()
    if dist.is_initialized():
        model = DistributedDataParallel(model)
    for epoch in range(2):
        save_checkpoint({"epoch": epoch, "state_dict": getattr(model, "module", model).state_dict()})


if __name__ == "__main__":
    main()
