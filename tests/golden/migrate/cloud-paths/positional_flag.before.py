import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("data", nargs="?", default="imagenet")
parser.add_argument("--outf", default=".", help="folder for images and checkpoints")
parser.add_argument("--dataset", default="cifar10", choices=["cifar10", "mnist"])
opt = parser.parse_args()

x = torch.load(os.path.join(opt.data, "train.pt"))
torch.save(x, "%s/netG_epoch_%d.pth" % (opt.outf, 1))
