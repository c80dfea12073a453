"""kuangliu/pytorch-cifar style: a checkpoint/ folder, --resume, a module-level loader."""
import argparse
import os

import torch  # expect: MA305
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"  # expect: MA302, MA304
parser = argparse.ArgumentParser(description="PyTorch CIFAR10 Training")
parser.add_argument("--lr", default=0.1, type=float, help="learning rate")
parser.add_argument("--resume", "-r", action="store_true", help="resume from checkpoint")
args = parser.parse_args()  # expect: MA103, MA104

torch.manual_seed(0)
trainset = TensorDataset(torch.randn(16, 3 * 4 * 4), torch.randint(0, 10, (16,)))
trainloader = DataLoader(trainset, batch_size=8, shuffle=True)
net = nn.Linear(48, 10).to(device)
if device == "cuda":  # expect: MA310
    net = torch.nn.DataParallel(net)  # expect: MA201, MA212
start_epoch = 0
if args.resume:
    assert os.path.isdir("checkpoint"), "Error: no checkpoint directory found!"  # expect: MA102
    checkpoint = torch.load("./checkpoint/ckpt.pth")  # expect: MA102
    net.load_state_dict(checkpoint["net"])
    start_epoch = checkpoint["epoch"]
criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)


def train(epoch):
    net.train()
    for inputs, targets in trainloader:
        inputs, targets = inputs.to(device), targets.to(device)
        optimizer.zero_grad()
        criterion(net(inputs), targets).backward()
        optimizer.step()
        break


def test(epoch):
    state = {"net": net.state_dict(), "epoch": epoch}  # expect: MA205
    if not os.path.isdir("checkpoint"):  # expect: MA102
        os.mkdir("checkpoint")  # expect: MA102
    torch.save(state, "./checkpoint/ckpt.pth")  # expect: MA102, MA403


for epoch in range(start_epoch, start_epoch + 1):
    train(epoch)
    test(epoch)
