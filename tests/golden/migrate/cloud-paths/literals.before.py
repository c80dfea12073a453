"""Hard-coded paths everywhere (a laptop script)."""
import argparse
import logging

import numpy as np
import pandas as pd
import torch
from torch.utils.tensorboard import SummaryWriter
from torchvision import datasets


def main():
    parser = argparse.ArgumentParser(description="train")
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()  # fails on ModelArts' extra arguments

    train = datasets.CIFAR10("./data/cifar", train=True, download=False)
    labels = pd.read_csv("./data/labels.csv")
    with open("./data/classes.txt") as handle:
        classes = handle.read().split()
    writer = SummaryWriter("./runs/tb")
    logging.getLogger().addHandler(logging.FileHandler("./runs/train.log"))
    for epoch in range(args.epochs):
        writer.add_scalar("epoch", epoch)
    torch.save({"classes": classes}, "./runs/model.pt")
    np.save("./runs/labels.npy", labels.values)
    with open("./runs/summary.txt", "w") as out:
        out.write(str(len(train)))


if __name__ == "__main__":
    main()
