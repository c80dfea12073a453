import argparse
import os

import torch


def save(model, optimizer, epoch, filename="last.pt"):
    torch.save({"model": model, "epoch": epoch}, filename)


def train(args):
    PATH = "model.pt"
    if os.path.exists(PATH):
        model = torch.load(PATH)
    for epoch in range(args.epochs):
        name = f"epoch_{epoch}.pt"
        torch.save({}, name)
        save({}, None, epoch, filename="ckpt_{:04d}.pt".format(epoch))
    torch.save({}, PATH)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args, _ = parser.parse_known_args()
    train(args)
