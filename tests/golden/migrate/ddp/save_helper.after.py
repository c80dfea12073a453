import argparse
import atexit
import os
import shutil

import torch
from torch.nn.parallel import DistributedDataParallel
import torch.distributed as dist
from torch.utils.data.distributed import DistributedSampler
import torch.nn as nn
from torch.utils.data import DataLoader


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    """Save the latest state and keep a copy of the best."""
    if dist.is_initialized() and dist.get_rank() != 0:
        return  # rank 0 writes the checkpoint (and its copies)
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")


def train(epoch):
    for x, y in trainloader:
        pass


parser = argparse.ArgumentParser()
parser.add_argument("--init_method", type=str, default=None)
parser.add_argument("--rank", type=int, default=0)
parser.add_argument("--world_size", type=int, default=1)
args = parser.parse_args()
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
trainloader = DataLoader(dataset, batch_size=8, shuffle=not dist.is_initialized(), sampler=DistributedSampler(dataset) if dist.is_initialized() else None)
model = nn.Linear(4, 2)
if dist.is_initialized():
    model = DistributedDataParallel(
        model,
        device_ids=[torch.cuda.current_device()] if torch.cuda.is_available() else None,
    )
if args.resume:
    getattr(model, "module", model).load_state_dict(torch.load("checkpoint.pth.tar")["state_dict"])
for epoch in range(3):
    if isinstance(trainloader.sampler, DistributedSampler):
        trainloader.sampler.set_epoch(epoch)
    train(epoch)
    save_checkpoint({"state_dict": getattr(model, "module", model).state_dict()}, True)
