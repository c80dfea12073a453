"""A script with its own helpers: a save function whose file name comes by keyword (formatted), a
logger class given its folder, DataParallel(...).cuda() in one chain."""
import argparse
import os
import shutil

import torch  # expect: MA305
import torch.nn as nn


class CSVLogger:
    def __init__(self, folder, name="log.csv"):
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.join(folder, name)

    def write(self, *values):
        with open(self.path, "a") as f:
            f.write(",".join(str(v) for v in values) + "\n")


def save_state(state, is_best, path):
    torch.save(state, path)  # expect: MA403
    if is_best:
        shutil.copyfile(path, os.path.join(os.path.dirname(path) or ".", "best.pth"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--lr", type=float, default=0.01)
    args, _ = parser.parse_known_args()  # expect: MA103
    model = nn.DataParallel(nn.Linear(8, 2)).cuda()  # expect: MA201, MA212, MA303
    logger = CSVLogger(folder="csv_logs")  # expect: MA102 @local-helper
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for epoch in range(args.epochs):
        x = torch.randn(4, 8).cuda()  # expect: MA303
        loss = model(x).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        logger.write(epoch, loss.item())
        state = {"model": model.state_dict()}  # expect: MA205
        save_state(state, True, path="state_e{}.pth".format(epoch))  # expect: MA102, MA401 @keyword-literal


if __name__ == "__main__":
    main()
