import argparse
import os

import torch


def save(model, optimizer, epoch, filename="last.pt"):
    torch.save({"model": model, "epoch": epoch}, filename)


def train(args):
    PATH = os.path.join(args.train_url, "model.pt")
    if os.path.exists(PATH):
        model = torch.load(PATH)
    for epoch in range(args.epochs):
        name = os.path.join(args.train_url, f"epoch_{epoch}.pt")
        torch.save({}, name)
        save({}, None, epoch, filename=os.path.join(args.train_url, "ckpt_{:04d}.pt".format(epoch)))
    torch.save({}, PATH)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--train_url", type=str, default=".", help="ModelArts passes the train_url channel's local directory here")
    args, _ = parser.parse_known_args()
    train(args)
