"""ddp-tutorial-series multigpu.py style: mp.spawn, MASTER_ADDR in code, rank-0 guard."""
import os

import torch
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch.distributed import destroy_process_group, init_process_group
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

CHECKPOINT_PATH = "checkpoint.pt"  # expect: MA102


def ddp_setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"  # expect: MA207
    os.environ["MASTER_PORT"] = "12355"  # expect: MA207
    init_process_group(backend="gloo", rank=rank, world_size=world_size)


def save(model):
    torch.save(model.module.state_dict(), CHECKPOINT_PATH)  # expect: MA403


def main(rank, world_size, total_epochs=1):
    ddp_setup(rank, world_size)
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(16, 8), torch.randint(0, 2, (16,)))
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, shuffle=False, sampler=sampler)
    model = DDP(torch.nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    for epoch in range(total_epochs):
        sampler.set_epoch(epoch)
        for source, targets in loader:
            optimizer.zero_grad()
            F.cross_entropy(model(source), targets).backward()
            optimizer.step()
            break
        if rank == 0:
            save(model)  # expect: MA401
    destroy_process_group()


if __name__ == "__main__":
    world_size = 1
    mp.spawn(main, args=(world_size,), nprocs=world_size)
