"""A laptop script: module path constants, hard-coded output files, a logger file."""
import argparse
import logging
import os

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

DATA_FILE = "./data/digits.pt"  # expect: MA101
OUTPUT_DIR = "./output"  # expect: MA102


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()  # expect: MA103, MA104
    os.makedirs(OUTPUT_DIR, exist_ok=True)
    logging.basicConfig(filename="./output/train.log", level=logging.INFO)  # expect: MA102
    print("data from", DATA_FILE)
    if os.path.exists(DATA_FILE):
        x, y = torch.load(DATA_FILE)
    else:
        x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(args.epochs):
        for xb, yb in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(xb), yb).backward()
            optimizer.step()
            break
        logging.info("epoch %d done", epoch)
    torch.save(model.state_dict(), os.path.join(OUTPUT_DIR, "model.pt"))


if __name__ == "__main__":
    main()
