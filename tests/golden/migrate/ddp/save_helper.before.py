import argparse
import shutil

import torch
import torch.nn as nn
from torch.utils.data import DataLoader


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    """Save the latest state and keep a copy of the best."""
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")


def train(epoch):
    for x, y in trainloader:
        pass


parser = argparse.ArgumentParser()
args = parser.parse_args()
trainloader = DataLoader(dataset, batch_size=8, shuffle=True)
model = nn.DataParallel(nn.Linear(4, 2))
if args.resume:
    model.load_state_dict(torch.load("checkpoint.pth.tar")["state_dict"])
for epoch in range(3):
    train(epoch)
    save_checkpoint({"state_dict": model.state_dict()}, True)
