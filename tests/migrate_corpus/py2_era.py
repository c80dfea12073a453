"""PyTorch 0.3-era script (2017): .cuda(async=True) (async is a keyword since Python 3.7),
Variable, volatile flags, a checkpoint in the working directory."""
# data: train.npy
import argparse
import os

import numpy as np
import torch  # expect: MA305
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

parser = argparse.ArgumentParser(description="PyTorch MNIST Example")
parser.add_argument("--data", default="./data/mnist", help="path to the data")  # expect: MA101
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--no-cuda", action="store_true", default=False)
args = parser.parse_args()  # expect: MA103, MA104
args.cuda = not args.no_cuda and torch.cuda.is_available()  # expect: MA302

model = nn.Linear(8, 2)
if args.cuda:
    model.cuda()  # expect: MA303
optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
images = torch.from_numpy(np.load(os.path.join(args.data, "train.npy"))).float()
targets = torch.zeros(len(images)).long()


def train(epoch):
    model.train()
    for start in range(0, len(images), 8):
        input, target = images[start : start + 8], targets[start : start + 8]
        if args.cuda:
            input = input.cuda(async=True)  # expect: MA000, MA303 @python2
            target = target.cuda(async=True)  # expect: MA000, MA303 @python2
        input, target = Variable(input), Variable(target)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(input), target)
        loss.backward()
        optimizer.step()
        print("Train Epoch: {} Loss: {:.6f}".format(epoch, loss.item()))


for epoch in range(1, args.epochs + 1):
    train(epoch)
    torch.save(model.state_dict(), "mnist_cnn_%d.pt" % epoch)  # expect: MA102, MA401, MA403 @python2
