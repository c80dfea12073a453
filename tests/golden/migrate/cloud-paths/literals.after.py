"""Hard-coded paths everywhere (a laptop script)."""
import argparse
import os
import logging

import numpy as np
import pandas as pd
import torch
from torch.utils.tensorboard import SummaryWriter
from torchvision import datasets


def main():
    parser = argparse.ArgumentParser(description="train")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--data_url", type=str, default="./data", help="ModelArts passes the data_url channel's local directory here")
    parser.add_argument("--train_url", type=str, default="./runs", help="ModelArts passes the train_url channel's local directory here")
    args, _unknown = parser.parse_known_args()  # fails on ModelArts' extra arguments

    train = datasets.CIFAR10(os.path.join(args.data_url, "cifar"), train=True, download=False)
    labels = pd.read_csv(os.path.join(args.data_url, "labels.csv"))
    with open(os.path.join(args.data_url, "classes.txt")) as handle:
        classes = handle.read().split()
    writer = SummaryWriter(os.path.join(args.train_url, "tb"))
    logging.getLogger().addHandler(logging.FileHandler(os.path.join(args.train_url, "train.log")))
    for epoch in range(args.epochs):
        writer.add_scalar("epoch", epoch)
    torch.save({"classes": classes}, os.path.join(args.train_url, "model.pt"))
    np.save(os.path.join(args.train_url, "labels.npy"), labels.values)
    with open(os.path.join(args.train_url, "summary.txt"), "w") as out:
        out.write(str(len(train)))


if __name__ == "__main__":
    main()
