import argparse
import os

import torch
from mini import utils

config_parser = argparse.ArgumentParser(add_help=False)
config_parser.add_argument("-c", "--config", default="")
parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--lr", type=float, default=0.1)


def _parse_args():
    args_config, remaining = config_parser.parse_known_args()
    parser.add_argument("--train_url", type=str, default="./output/train", help="ModelArts passes the train_url channel's local directory here")
    args, _unknown = parser.parse_known_args(remaining)
    return args, str(args)


def main():
    args, text = _parse_args()
    torch.save({}, os.path.join(args.train_url, "last.pth"))
    with open(os.path.join(args.train_url, "args.txt"), "w") as f:
        f.write(text)
