"""Hard-coded rendezvous: MASTER_ADDR, CUDA_VISIBLE_DEVICES, a tcp:// init method in code."""
import argparse
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"  # expect: MA209


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--world_size", type=int, default=1)
    parser.add_argument("--data_url", type=str, default="./data")
    parser.add_argument("--train_url", type=str, default="./out")
    args, _ = parser.parse_known_args()
    port = os.environ.get("PORT", "29511")
    dist.init_process_group(
        "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=args.rank, world_size=args.world_size  # expect: MA208
    )
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,)))
    loader = DataLoader(dataset, batch_size=4, sampler=DistributedSampler(dataset))
    model = nn.parallel.DistributedDataParallel(nn.Linear(4, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(1):  # expect: MA203
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            break
    if args.rank == 0:
        os.makedirs(args.train_url, exist_ok=True)
        torch.save(model.module.state_dict(), os.path.join(args.train_url, "model.pt"))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
