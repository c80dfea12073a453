"""PyTorch tutorials style: a checkpoint PATH local to a function, an f-string name kept in a
local and saved later, and a file name passed by keyword to the script's own save helper."""
# data: features.npy
# saves: 3
import argparse
import os

import numpy as np
import torch  # expect: MA305
import torch.nn as nn
import torch.optim as optim


def save_checkpoint(model, optimizer, epoch, filename="checkpoint.pth.tar"):  # expect: MA102
    torch.save({"epoch": epoch, "model": model.state_dict(), "optim": optimizer.state_dict()}, filename)  # expect: MA403


def train(args):
    device = "cuda" if torch.cuda.is_available() else "cpu"  # expect: MA302, MA304
    features = torch.from_numpy(np.load(args.features)).float()
    model = nn.Linear(8, 2).to(device)
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    PATH = "model.pt"  # expect: MA102 @local-var
    if os.path.exists(PATH):
        checkpoint = torch.load(PATH)
        model.load_state_dict(checkpoint["model_state_dict"])
    for epoch in range(args.epochs):
        optimizer.zero_grad()
        loss = model(features.to(device)).pow(2).mean()
        loss.backward()
        optimizer.step()
        name = f"epoch_{epoch}.pt"  # expect: MA102 @local-var
        torch.save(model.state_dict(), name)  # expect: MA403
        save_checkpoint(model, optimizer, epoch, filename="checkpoint_{:04d}.pth.tar".format(epoch))  # expect: MA102 @keyword-literal
    torch.save({"epoch": args.epochs, "model_state_dict": model.state_dict()}, PATH)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--features", default="data/features.npy")  # expect: MA101
    parser.add_argument("--epochs", type=int, default=1)
    args, _ = parser.parse_known_args()  # expect: MA103
    train(args)


if __name__ == "__main__":
    main()
