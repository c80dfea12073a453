import argparse
import os

import torch

DATA_DIR = "/home/me/datasets/digits"
CKPT_DIR = "./checkpoints"


def train(args):
    samples = torch.load(os.path.join(DATA_DIR, "train.pt"))
    os.makedirs(CKPT_DIR, exist_ok=True)
    torch.save(samples, os.path.join(CKPT_DIR, "last.pt"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    train(args)
