"""Control: device-agnostic code on torch.accelerator (torch >= 2.6 loads torch_npu by itself),
paths from the channel arguments. No error expected."""
import argparse
import os

import torch
from torch import nn


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_url", type=str, default="data")
    parser.add_argument("--train_url", type=str, default="output")
    args, _unknown = parser.parse_known_args()
    accelerator = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else None
    device = accelerator if accelerator is not None else torch.device("cpu")
    model = nn.Linear(4, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 4, device=device), torch.randint(0, 2, (8,), device=device)
    optimizer.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
    os.makedirs(args.train_url, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.train_url, "model.pt"))


if __name__ == "__main__":
    main()
