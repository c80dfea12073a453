"""ImageNet-example style: argparse, save_checkpoint with a model_best copy, DataParallel."""
import argparse
import os
import shutil

import numpy as np
import torch  # expect: MA305
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser(description="ImageNet-style training")
parser.add_argument("--data", metavar="DIR", default="./imagenet")  # expect: MA101
parser.add_argument("--epochs", default=1, type=int)
parser.add_argument("--lr", default=0.1, type=float)
parser.add_argument("--dist-url", default="tcp://224.66.41.62:23456", type=str)  # expect: MA208
parser.add_argument("--dist-backend", default="nccl", type=str)  # expect: MA301
parser.add_argument("--gpu", default=None, type=int)


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):  # expect: MA102
    torch.save(state, filename)  # expect: MA403
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")  # expect: MA102


def main():
    args = parser.parse_args()  # expect: MA103, MA104
    torch.manual_seed(0)
    traindir = os.path.join(args.data, "train.npy")
    if os.path.exists(traindir):
        x = torch.from_numpy(np.load(traindir))
    else:
        x = torch.randn(16, 8)
    dataset = TensorDataset(x, torch.randint(0, 2, (len(x),)))
    loader = DataLoader(dataset, batch_size=8, shuffle=True)
    model = nn.Linear(8, 2)
    if torch.cuda.is_available():  # expect: MA302
        model = model.cuda()  # expect: MA303
    model = torch.nn.DataParallel(model)  # expect: MA201, MA212
    optimizer = torch.optim.SGD(model.parameters(), args.lr)
    for epoch in range(args.epochs):
        for images, target in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(images), target).backward()
            optimizer.step()
            break
        save_checkpoint(  # expect: MA401
            {"epoch": epoch + 1, "state_dict": model.state_dict()},  # expect: MA205
            is_best=True,
        )


if __name__ == "__main__":
    main()
