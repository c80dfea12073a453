"""Python 2 era ImageNet-style loop: print statements and .cuda(async=True) beside lines that are
fine Python 3."""
import argparse
import os

import torch  # expect: MA305
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--data-dir", default="/data/imagenet")  # expect: MA101
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()  # expect: MA103, MA104

model = nn.Linear(8, 2).cuda()  # expect: MA303
criterion = nn.CrossEntropyLoss().cuda()  # expect: MA303
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.load(os.path.join(args.data_dir, "train.pt"))
for epoch in range(args.epochs):
    input_var = x[0].cuda(async=True)  # expect: MA000, MA303 @python2
    target_var = x[1].cuda(async=True)  # expect: MA000, MA303 @python2
    loss = criterion(model(input_var), target_var)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print "epoch %d loss %.3f" % (epoch, loss.item())  # expect: MA000 @python2
torch.save(model.state_dict(), "checkpoint_final.pth")  # expect: MA102 @python2
