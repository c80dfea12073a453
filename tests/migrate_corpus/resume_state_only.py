"""Saves only the model's weights every epoch, to one file under --train_url: no epoch and no
optimizer state to resume from, and a kill mid-save leaves a cut file."""
# checkpoints: train_url/ckpt/
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--train_url", default="output")
parser.add_argument("--epochs", type=int, default=1)
args, _ = parser.parse_known_args()  # expect: MA103
model = nn.Linear(8, 2)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(1, args.epochs + 1):
    x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
    torch.save(model.state_dict(), os.path.join(args.train_url, "weights.pt"))  # expect: MA401, MA402, MA403 @outside-checkpoints
