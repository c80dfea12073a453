import argparse

import torch
from torch.utils.data.distributed import DistributedSampler
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader


def run(args, dataset, model):
    dist.init_process_group("gloo", init_method=args.init_method, rank=args.rank,
                            world_size=args.world_size)
    model = DDP(model)
    loader = DataLoader(dataset, batch_size=16, shuffle=not dist.is_initialized(), sampler=DistributedSampler(dataset) if dist.is_initialized() else None)
    for epoch in range(3):
        if isinstance(loader.sampler, DistributedSampler):
            loader.sampler.set_epoch(epoch)
        for batch in loader:
            model(batch).sum().backward()
        # every rank writes the same file
        if not dist.is_initialized() or dist.get_rank() == 0:
            torch.save(getattr(model, "module", model).state_dict(), args.out)
