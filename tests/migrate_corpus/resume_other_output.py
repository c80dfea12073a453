"""A job with two outputs: checkpoints go to --log_url, while the spec keeps them (and
predownloads them) under train_url/ckpt/: the restarted job finds nothing to resume from."""
# checkpoints: train_url/ckpt/
import argparse
import os

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--train_url", default="output")
parser.add_argument("--log_url", default="logs")  # expect: MA102
parser.add_argument("--epochs", type=int, default=1)
args, _ = parser.parse_known_args()  # expect: MA103
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
last = os.path.join(args.train_url, "ckpt", "last.pt")
if os.path.exists(last):
    checkpoint = torch.load(last)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
os.makedirs(args.log_url, exist_ok=True)
for epoch in range(args.epochs):
    optimizer.zero_grad()
    model(torch.randn(4, 8)).sum().backward()
    optimizer.step()
    state = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
    torch.save(state, os.path.join(args.log_url, "last.pt") + ".tmp")  # expect: MA402 @outside-checkpoints
    os.replace(os.path.join(args.log_url, "last.pt") + ".tmp", os.path.join(args.log_url, "last.pt"))
