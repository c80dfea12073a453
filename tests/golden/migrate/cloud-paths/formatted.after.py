"""Formatted checkpoint paths and pathlib directories, as plain loops write them."""
import argparse
import os
from pathlib import Path

import torch
from torch.utils.tensorboard import SummaryWriter

parser = argparse.ArgumentParser()
parser.add_argument("--name", default="exp")
parser.add_argument("--train_url", type=str, default=".", help="ModelArts passes the train_url channel's local directory here")
args = parser.parse_known_args()[0]
save_dir = Path(os.path.join(args.train_url, "runs")) / args.name
save_dir.mkdir(parents=True, exist_ok=True)
print("logging to", Path("runs") / args.name)
writer = SummaryWriter(os.path.join(args.train_url, "runs", f"{args.name}"))
model = torch.nn.Linear(2, 2)
for epoch in range(2):
    torch.save(model.state_dict(), os.path.join(args.train_url, "checkpoints", f"epoch_{epoch}.pt"))
    torch.save(model.state_dict(), os.path.join(args.train_url, "checkpoints", "epoch_%d.pt" % epoch))
    torch.save(model.state_dict(), os.path.join(args.train_url, "checkpoints", 'epoch_{}.pt'.format(epoch)))
