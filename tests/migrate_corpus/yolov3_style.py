"""PyTorch-YOLOv3 (2019) train.py style: os.makedirs("checkpoints") and a checkpoint named
f"checkpoints/yolov3_ckpt_%d.pth" % epoch, a Logger class writing under "logs", Variable."""
# data: train.npy
import argparse
import os
import time

import numpy as np
import torch  # expect: MA305
import torch.nn as nn
from torch.autograd import Variable


class Logger(object):
    def __init__(self, log_dir):
        os.makedirs(log_dir, exist_ok=True)
        self.path = os.path.join(log_dir, "scalars.txt")

    def scalar_summary(self, tag, value, step):
        with open(self.path, "a") as f:
            f.write("%s %d %f\n" % (tag, step, value))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1, help="number of epochs")
    parser.add_argument("--batch_size", type=int, default=8, help="size of each image batch")
    parser.add_argument("--train_path", type=str, default="data/coco/train.npy", help="path to the training set")  # expect: MA101
    parser.add_argument("--checkpoint_interval", type=int, default=1, help="interval between saving model weights")
    opt = parser.parse_args()  # expect: MA103, MA104
    print(opt)

    logger = Logger("logs")  # expect: MA102 @local-helper
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")  # expect: MA302, MA304

    os.makedirs("output", exist_ok=True)  # expect: MA102
    os.makedirs("checkpoints", exist_ok=True)  # expect: MA102

    model = nn.Linear(8, 2).to(device)
    optimizer = torch.optim.Adam(model.parameters())
    images = torch.from_numpy(np.load(opt.train_path)).float()

    for epoch in range(opt.epochs):
        model.train()
        start_time = time.time()
        imgs = Variable(images[: opt.batch_size].to(device))
        loss = model(imgs).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        logger.scalar_summary("loss", loss.item(), epoch)
        if epoch % opt.checkpoint_interval == 0:
            torch.save(model.state_dict(), f"checkpoints/yolov3_ckpt_%d.pth" % epoch)  # expect: MA102, MA401, MA403
