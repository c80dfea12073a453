import argparse

import torch
import torch.nn as nn


def save_checkpoint(state, filename="checkpoint.pth.tar"):
    torch.save(state, filename)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--world_size", type=int, default=1)
    args = parser.parse_args()
    model = nn.Linear(8, 8)
    model = nn.DataParallel(model, device_ids=[0, 1]).cuda()
    for epoch in range(2):
        save_checkpoint({"epoch": epoch, "state_dict": model.state_dict()})


if __name__ == "__main__":
    main()
