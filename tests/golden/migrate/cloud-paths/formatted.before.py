"""Formatted checkpoint paths and pathlib directories, as plain loops write them."""
import argparse
from pathlib import Path

import torch
from torch.utils.tensorboard import SummaryWriter

parser = argparse.ArgumentParser()
parser.add_argument("--name", default="exp")
args = parser.parse_known_args()[0]
save_dir = Path("runs") / args.name
save_dir.mkdir(parents=True, exist_ok=True)
print("logging to", Path("runs") / args.name)
writer = SummaryWriter(f"runs/{args.name}")
model = torch.nn.Linear(2, 2)
for epoch in range(2):
    torch.save(model.state_dict(), f"checkpoints/epoch_{epoch}.pt")
    torch.save(model.state_dict(), "checkpoints/epoch_%d.pt" % epoch)
    torch.save(model.state_dict(), 'checkpoints/epoch_{}.pt'.format(epoch))
