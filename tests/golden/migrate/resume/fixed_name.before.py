"""Saves one checkpoint, overwritten every epoch, from inside main()."""
import argparse
import os

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train_url", default="output")
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_known_args()[0]
    net = torch.nn.Linear(8, 2)
    optim = torch.optim.Adam(net.parameters())
    for epoch in range(1, args.epochs + 1):
        optim.step()
        state = {"net": net.state_dict(), "optim": optim.state_dict(), "epoch": epoch + 1}
        if epoch % 2 == 0:  # every other epoch
            torch.save(state, os.path.join(args.train_url, "ckpt", "last.pt"))
    torch.save(net.state_dict(), os.path.join(args.train_url, "final.pt"))
