import argparse
import os

import torch

DATA_DIR = "/home/me/datasets/digits"
CKPT_DIR = "./checkpoints"


def train(args):
    samples = torch.load(os.path.join(args.data_url, "train.pt"))
    os.makedirs(args.train_url, exist_ok=True)
    torch.save(samples, os.path.join(args.train_url, "last.pt"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--data_url", type=str, default=DATA_DIR, help="ModelArts passes the data_url channel's local directory here")
    parser.add_argument("--train_url", type=str, default=CKPT_DIR, help="ModelArts passes the train_url channel's local directory here")
    args, _unknown = parser.parse_known_args()
    train(args)
