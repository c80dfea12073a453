"""Control: device-agnostic code, paths from arguments, ModelArts-ready. No error expected."""
import argparse
import os

import torch
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_url", type=str, default="")
    parser.add_argument("--train_url", type=str, default="./output")
    parser.add_argument("--device", type=str, default="cpu")
    args, _unknown = parser.parse_known_args()
    device = torch.device(args.device)
    torch.manual_seed(0)
    model = nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4, device=device), torch.randint(0, 2, (8,), device=device)
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
    os.makedirs(args.train_url, exist_ok=True)
    print(f"saving to {args.train_url}")
    torch.save(model.state_dict(), os.path.join(args.train_url, "model.pt"))


if __name__ == "__main__":
    main()
