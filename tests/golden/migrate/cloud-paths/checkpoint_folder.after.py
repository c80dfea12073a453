import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--resume", action="store_true")
parser.add_argument("--train_url", type=str, default=".", help="ModelArts passes the train_url channel's local directory here")
args, _unknown = parser.parse_known_args()

if args.resume:
    # Load checkpoint.
    assert os.path.isdir(os.path.join(args.train_url, "checkpoint")), "Error: no checkpoint directory found!"
    checkpoint = torch.load(os.path.join(args.train_url, "checkpoint/ckpt.pth"))


def test(state):
    print("Saving to ./checkpoint")
    if not os.path.isdir(os.path.join(args.train_url, "checkpoint")):
        os.makedirs(os.path.join(args.train_url, "checkpoint"), exist_ok=True)
    torch.save(state, os.path.join(args.train_url, "checkpoint/ckpt.pth"))
