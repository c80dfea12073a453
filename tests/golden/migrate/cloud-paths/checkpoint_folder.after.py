import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--resume", action="store_true")
parser.add_argument("--data_url", type=str, default="./data", help="ModelArts passes the data_url channel's local directory here")
parser.add_argument("--train_url", type=str, default="./checkpoint", help="ModelArts passes the train_url channel's local directory here")
args, _unknown = parser.parse_known_args()

if args.resume:
    # Load checkpoint.
    assert os.path.isdir(args.train_url), "Error: no checkpoint directory found!"
    checkpoint = torch.load(os.path.join(args.train_url, "ckpt.pth"))


def test(state):
    print("Saving to ./checkpoint")
    if not os.path.isdir(args.train_url):
        os.makedirs(args.train_url, exist_ok=True)
    torch.save(state, os.path.join(args.train_url, "ckpt.pth"))
