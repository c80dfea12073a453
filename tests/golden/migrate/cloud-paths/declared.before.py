import argparse

import torch


def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_url", default="./data")
    parser.add_argument("--train_url", default="./out")
    return parser.parse_args()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_url", default="./data")
    parser.add_argument("--train_url", default="./out")
    opts = parser.parse_args()
    weights = torch.load("./data/pretrained/resnet.pth")
    torch.save(weights, "./out/final.pth")
    torch.save(weights, "/tmp/elsewhere.pth")  # outside --train_url's default: left alone


main()
