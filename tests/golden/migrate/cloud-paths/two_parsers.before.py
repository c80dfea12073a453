import argparse

import torch
from mini import utils

config_parser = argparse.ArgumentParser(add_help=False)
config_parser.add_argument("-c", "--config", default="")
parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--lr", type=float, default=0.1)


def _parse_args():
    args_config, remaining = config_parser.parse_known_args()
    args = parser.parse_args(remaining)
    return args, str(args)


def main():
    args, text = _parse_args()
    torch.save({}, "output/train/last.pth")
    with open("output/train/args.txt", "w") as f:
        f.write(text)
