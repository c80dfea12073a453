import argparse
import os

import torch


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_url", default="./data")
    parser.add_argument("--train_url", default="./out")
    return parser.parse_known_args()[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_url", default="./data")
    parser.add_argument("--train_url", default="./out")
    opts, _unknown = parser.parse_known_args()
    weights = torch.load(os.path.join(opts.data_url, "pretrained/resnet.pth"))
    torch.save(weights, os.path.join(opts.train_url, "final.pth"))
    torch.save(weights, "/tmp/elsewhere.pth")  # outside --train_url's default: left alone


main()
