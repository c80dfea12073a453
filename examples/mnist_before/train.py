"""MNIST-style digits classifier, as written for a laptop (before the ModelArts change).

Hard-coded paths: it reads ../data/digits.npz next to this file and writes ./output/model.pth
relative to wherever it is started. On ModelArts the data is at --data_url and only --train_url
is uploaded, and the platform's extra arguments make parse_args() fail. Compare with
../mnist/train.py. The training is the same: seeded, a cosine learning rate down to zero, 0.93 test
accuracy or better after 8 epochs; each epoch prints its training loss and test accuracy.
"""

import argparse
import os
import random

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

DATA_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "digits.npz")
OUTPUT_DIR = "./output"
SEED = 0


def seed_everything(seed):
    """The same run every time on a given machine (bits can differ between CPU kinds)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS
    torch.use_deterministic_algorithms(True, warn_only=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 16, kernel_size=3, padding=1)
        self.fc1 = nn.Linear(16 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(x)


def load_split(path, test_fraction=0.2, seed=SEED):
    data = np.load(path)
    images = torch.tensor(data["images"], dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.tensor(data["labels"], dtype=torch.long)
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(seed))
    n_test = int(len(labels) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return TensorDataset(images[train], labels[train]), TensorDataset(images[test], labels[test])


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x).argmax(1) == y).sum().item()
            total += len(y)
    return correct / total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--batch_size", type=int, default=32)
    args = parser.parse_args()

    seed_everything(SEED)
    train_set, test_set = load_split(DATA_FILE)
    shuffle = torch.Generator().manual_seed(SEED)  # the order of the batches, every epoch
    train_loader = DataLoader(
        train_set, batch_size=args.batch_size, shuffle=True, generator=shuffle
    )
    test_loader = DataLoader(test_set, batch_size=256)
    model = Net()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    # Decayed per step to 0 at the end: the last epoch settles instead of bouncing around.
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(
        optimizer, T_max=max(1, args.epochs * len(train_loader))
    )
    for epoch in range(args.epochs):
        model.train()
        loss_sum = 0.0
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            scheduler.step()
            loss_sum += loss.item() * len(y)
        train_loss = loss_sum / len(train_set)
        accuracy = evaluate(model, test_loader)
        print(f"epoch {epoch}: train loss {train_loss:.4f}, test accuracy {accuracy:.4f}")

    os.makedirs(OUTPUT_DIR, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(OUTPUT_DIR, "model.pth"))


if __name__ == "__main__":
    main()
