"""Control: resumable training done right: the latest good checkpoint under train_url/ckpt/ is
loaded at start, and each save goes to a temporary name first, then os.replace."""
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
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
ckpt = os.path.join(args.train_url, "ckpt", "last.pt")
start = 0
if os.path.isfile(ckpt):
    state = torch.load(ckpt, map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    start = state["epoch"] + 1
os.makedirs(os.path.dirname(ckpt), exist_ok=True)
for epoch in range(start, args.epochs):
    x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
    optimizer.zero_grad()
    F.cross_entropy(model(x), y).backward()
    optimizer.step()
    state = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
    torch.save(state, ckpt + ".tmp")  # clean: @false-alarm
    os.replace(ckpt + ".tmp", ckpt)
