import argparse
import atexit
import os

import torch
from torch.nn.parallel import DistributedDataParallel
import torch.distributed as dist
from torch.utils.data.distributed import DistributedSampler
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=2)
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

    dataset = TensorDataset(torch.randn(64, 4), torch.randint(0, 2, (64,)))
    loader = DataLoader(
        dataset,
        batch_size=8,
        shuffle=not dist.is_initialized(),
        sampler=DistributedSampler(dataset) if dist.is_initialized() else None,
    )
    model = nn.Linear(4, 2)
    # Use every GPU of the machine.
    if dist.is_initialized():
        model = DistributedDataParallel(
            model,
            device_ids=[torch.cuda.current_device()] if torch.cuda.is_available() else None,
        )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        if isinstance(loader.sampler, DistributedSampler):
            loader.sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
    if not dist.is_initialized() or dist.get_rank() == 0:
        torch.save(getattr(model, "module", model).state_dict(), "model.pt")  # the checkpoint


if __name__ == "__main__":
    main()
