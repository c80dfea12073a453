"""MNIST-style digits classifier, ready for ModelArts (after the data_url/train_url change).

The changes from ../mnist_before/train.py: the data comes from --data_url (the input dir
ModelArts downloads to), everything worth keeping goes to --train_url (the output dir it
uploads), and parse_known_args() lets the platform add arguments of its own.
Seeded and deterministic where torch allows; the learning rate follows a cosine from --lr down to
zero over the run, so the last epoch is the best or close to it. In 8 epochs on the 8x8 digits (a
second or two on a CPU) it ends at 0.93 test accuracy or better (0.95-0.99 in every run we
measured, over several seeds). Each epoch prints its training loss and test accuracy; both go
to metrics.json next to model.pth.

Resumable (ModelArts' "Resumable Training"): after every epoch the model, optimizer, scheduler
and batch-order states go to --train_url/ckpt/ (checkpoints.py: atomic, the last two kept);
at start the newest good checkpoint of a run with the same settings is loaded and training
continues with the next epoch, so a restarted job ends where an uninterrupted one ends. The
spec's fault_tolerance.checkpoints (train_url/ckpt/) makes ModelArts download that output into
the restarted job's container. A checkpoint of other settings (the debug stage's one epoch) is
not resumed from: it would carry that run's schedule.
"""

import argparse
import json
import os
import random

import numpy as np
import torch
import torch.nn.functional as F
from checkpoints import load_latest, save_checkpoint
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

SEED = 0
CHECKPOINT_FOLDER = "ckpt"  # under --train_url: the spec's fault_tolerance.checkpoints


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


def resume(folder, settings, model, optimizer, scheduler, shuffle):
    """The epoch to start from and the history so far: 0 and [] without a checkpoint to use."""
    latest = load_latest(folder, torch.load)
    if latest is None:
        return 0, []
    epoch, state = latest
    if state["settings"] != settings:
        print(f"checkpoint of epoch {epoch} is of other settings ({state['settings']}): not used")
        return 0, []
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    shuffle.set_state(state["shuffle"])
    print(f"resumed from the checkpoint of epoch {epoch}")
    return epoch + 1, state["history"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_url", required=True, help="input dir (digits.npz)")
    parser.add_argument("--train_url", required=True, help="output dir (model.pth)")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--batch_size", type=int, default=32)
    args, unknown = parser.parse_known_args()
    if unknown:
        print(f"ignoring arguments: {unknown}")

    seed_everything(SEED)
    train_set, test_set = load_split(os.path.join(args.data_url, "digits.npz"))
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
    folder = os.path.join(args.train_url, CHECKPOINT_FOLDER)
    settings = {"epochs": args.epochs, "lr": args.lr, "batch_size": args.batch_size}
    start, history = resume(folder, settings, model, optimizer, scheduler, shuffle)
    accuracy = evaluate(model, test_loader)
    for epoch in range(start, args.epochs):
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
        history.append({"epoch": epoch, "train_loss": train_loss, "test_accuracy": accuracy})
        print(f"epoch {epoch}: train loss {train_loss:.4f}, test accuracy {accuracy:.4f}")
        state = {
            "settings": settings,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "shuffle": shuffle.get_state(),
            "history": history,
        }
        save_checkpoint(folder, epoch, state, torch.save)

    os.makedirs(args.train_url, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(args.train_url, "model.pth"))
    with open(os.path.join(args.train_url, "metrics.json"), "w") as out:
        json.dump({"test_accuracy": accuracy, "epochs": args.epochs, "history": history}, out)
    print(f"final test accuracy {accuracy:.4f}")


if __name__ == "__main__":
    main()
