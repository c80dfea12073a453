import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("data", nargs="?", default="imagenet")
parser.add_argument("--outf", default=".", help="folder for images and checkpoints")
parser.add_argument("--dataset", default="cifar10", choices=["cifar10", "mnist"])
parser.add_argument("--data_url", type=str, default="./imagenet", help="ModelArts passes the data_url channel's local directory here")
parser.add_argument("--train_url", type=str, default=".", help="ModelArts passes the train_url channel's local directory here")
opt, _unknown = parser.parse_known_args()
if opt.data == "imagenet":
    opt.data = opt.data_url
if opt.outf == ".":
    opt.outf = opt.train_url

x = torch.load(os.path.join(opt.data, "train.pt"))
torch.save(x, "%s/netG_epoch_%d.pth" % (opt.outf, 1))
