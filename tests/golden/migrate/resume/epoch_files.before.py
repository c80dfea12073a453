import argparse
import os

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--train_url", default="output")
parser.add_argument("--epochs", type=int, default=10)
args, _unknown = parser.parse_known_args()
model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
ckpt_dir = os.path.join(args.train_url, "ckpt")
os.makedirs(ckpt_dir, exist_ok=True)

# train
for epoch in range(args.epochs):
    optimizer.zero_grad()
    F.cross_entropy(model(torch.randn(4, 8)), torch.zeros(4, dtype=torch.long)).backward()
    optimizer.step()
    torch.save(
        {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()},
        os.path.join(ckpt_dir, f"epoch_{epoch:03d}.pt"),
    )
