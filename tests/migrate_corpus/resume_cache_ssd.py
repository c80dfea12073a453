"""ModelArts habit: checkpoints on the node's local SSD (/cache), copied nowhere. A restart gets a
fresh node: the checkpoints are gone, and the script never looks for them anyway."""
# check-only: it writes to /cache, the node's local SSD on ModelArts, which this machine has no business writing
import argparse
import os

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--train_url", default="output")
args, _ = parser.parse_known_args()  # expect: MA103
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
os.makedirs("/cache/ckpt", exist_ok=True)  # expect: MA102
for epoch in range(args.epochs):
    optimizer.zero_grad()
    model(torch.randn(4, 8)).sum().backward()
    optimizer.step()
    torch.save({"epoch": epoch, "model": model.state_dict()}, "/cache/ckpt/epoch_%d.pt" % epoch)  # expect: MA102, MA401, MA403 @no-resume
torch.save(model.state_dict(), os.path.join(args.train_url, "model.pt"))
