"""A plain epoch loop that saves a full checkpoint (epoch, model, optimizer) into a folder under
--train_url every epoch, but never loads one: a restarted job trains from scratch."""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_url", default="output")
    parser.add_argument("--epochs", type=int, default=1)
    args, _unknown = parser.parse_known_args()  # expect: MA103
    torch.manual_seed(0)
    model = nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ckpt_dir = os.path.join(args.train_url, "ckpt")
    os.makedirs(ckpt_dir, exist_ok=True)
    for epoch in range(args.epochs):
        x, y = torch.randn(16, 8), torch.randint(0, 2, (16,))
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()
        print(f"epoch {epoch}")
        state = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
        torch.save(state, os.path.join(ckpt_dir, f"epoch_{epoch}.pt"))  # expect: MA401, MA403 @no-resume


if __name__ == "__main__":
    main()
