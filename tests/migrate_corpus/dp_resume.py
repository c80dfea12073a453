"""DataParallel with resume: the checkpoint is loaded into the wrapped model."""
import argparse
import os

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--train_url", type=str, default="./results")
    parser.add_argument("--data_url", type=str, default="./data")
    args = parser.parse_args()  # expect: MA104
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,)))
    loader = DataLoader(dataset, batch_size=8, shuffle=True)
    model = nn.DataParallel(nn.Linear(4, 2))  # expect: MA201, MA212
    ckpt = os.path.join(args.train_url, "last.pt")
    if os.path.exists(ckpt):
        model.load_state_dict(torch.load(ckpt))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            break
    os.makedirs(args.train_url, exist_ok=True)
    torch.save(model.state_dict(), ckpt)  # expect: MA205


if __name__ == "__main__":
    main()
