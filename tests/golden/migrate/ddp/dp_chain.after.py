import argparse
import atexit
import os

import torch
from torch.nn.parallel import DistributedDataParallel
import torch.distributed as dist
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--init_method", type=str, default=None)
parser.add_argument("--rank", type=int, default=0)
parser.add_argument("--world_size", type=int, default=1)
args, _ = parser.parse_known_args()
if args.world_size > 1:
    if torch.cuda.is_available():
        # one process per device: LOCAL_RANK when a launcher starts several
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    dist.init_process_group(
        backend="nccl" if torch.cuda.is_available() else "gloo",
        init_method=args.init_method,
        rank=args.rank,
        world_size=args.world_size,
    )

    @atexit.register
    def _leave_process_group():
        # Leave the group together before Python exits: a rank that exits in
        # it can die of SIGABRT, and rank 0 hosts the rendezvous store.
        if dist.is_initialized():
            dist.barrier()
            dist.destroy_process_group()
model = nn.Linear(2, 2)
model = model.cuda()
if dist.is_initialized():
    model = DistributedDataParallel(
        model,
        device_ids=[torch.cuda.current_device()] if torch.cuda.is_available() else None,
    )
