"""Control: device-agnostic torchrun-ready code, pathlib paths from arguments, rank-0 save. No error expected."""
import argparse
import logging
import os
from pathlib import Path

import torch
import torch.distributed as dist
from torch import nn

log = logging.getLogger("train")


def is_main():
    return not dist.is_initialized() or dist.get_rank() == 0


def save(model, out_dir):
    path = Path(out_dir) / "model.pt"
    log.info("saving to %s", "out_dir/model.pt")
    torch.save(model.state_dict(), path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_url", type=str, default="")
    parser.add_argument("--train_url", type=str, default="./output")
    parser.add_argument("--device", type=str, default="cpu")
    parser.add_argument("--backend", type=str, default="gloo")
    parser.add_argument("--init_method", type=str, default=None)
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--world_size", type=int, default=1)
    args, _unknown = parser.parse_known_args()
    if args.world_size > 1:
        dist.init_process_group(args.backend, init_method=args.init_method, rank=args.rank, world_size=args.world_size)
    device = torch.device(args.device)
    out_dir = Path(args.train_url)
    out_dir.mkdir(parents=True, exist_ok=True)
    print("logs in", Path("runs") / "train")
    torch.manual_seed(0)
    model = nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4, device=device), torch.randint(0, 2, (8,), device=device)
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
    if is_main():
        save(model, out_dir)
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
