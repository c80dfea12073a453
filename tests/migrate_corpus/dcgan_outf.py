"""pytorch/examples dcgan style: --dataset with choices (a name), --dataroot, --outf '.' used as
'%s/netG_epoch_%d.pth' % (opt.outf, epoch), opt instead of args."""
# data: train.npy
# saves: 2
import argparse
import os
import random

import numpy as np
import torch  # expect: MA305
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.optim as optim

parser = argparse.ArgumentParser()
parser.add_argument("--dataset", default="cifar10", help="cifar10 | lsun | mnist | folder | fake",  # clean: @false-alarm
                    choices=["cifar10", "lsun", "mnist", "folder", "fake"])
parser.add_argument("--dataroot", default="./data", help="path to dataset")  # expect: MA101 @opaque-name
parser.add_argument("--batchSize", type=int, default=8)
parser.add_argument("--niter", type=int, default=1)
parser.add_argument("--cuda", action="store_true")
parser.add_argument("--netG", default="", help="path to netG (to continue training)")
parser.add_argument("--outf", default=".", help="folder to output images and model checkpoints")  # expect: MA102 @opaque-name
parser.add_argument("--manualSeed", type=int)
opt = parser.parse_args()  # expect: MA103, MA104

try:
    os.makedirs(opt.outf)
except OSError:
    pass

if opt.manualSeed is None:
    opt.manualSeed = random.randint(1, 10000)
random.seed(opt.manualSeed)
torch.manual_seed(opt.manualSeed)
cudnn.benchmark = True
device = torch.device("cuda:0" if opt.cuda else "cpu")  # expect: MA304

if opt.dataset in ["cifar10", "folder"]:
    data = torch.from_numpy(np.load(os.path.join(opt.dataroot, "train.npy")))
else:
    data = torch.randn(16, 8)

netG = nn.Sequential(nn.Linear(4, 8), nn.Tanh()).to(device)
netD = nn.Sequential(nn.Linear(8, 1), nn.Sigmoid()).to(device)
if opt.netG != "":
    netG.load_state_dict(torch.load(opt.netG))
criterion = nn.BCELoss()
optimizerD = optim.Adam(netD.parameters(), lr=2e-4)
optimizerG = optim.Adam(netG.parameters(), lr=2e-4)

for epoch in range(opt.niter):
    real = data[: opt.batchSize].to(device)
    optimizerD.zero_grad()
    errD = criterion(netD(real), torch.ones(len(real), 1, device=device))
    errD.backward()
    optimizerD.step()
    fake = netG(torch.randn(opt.batchSize, 4, device=device))
    optimizerG.zero_grad()
    errG = criterion(netD(fake), torch.ones(opt.batchSize, 1, device=device))
    errG.backward()
    optimizerG.step()
    np.save("%s/fake_samples_epoch_%03d.npy" % (opt.outf, epoch), fake.detach().cpu().numpy())
    torch.save(netG.state_dict(), "%s/netG_epoch_%d.pth" % (opt.outf, epoch))  # expect: MA403
    torch.save(netD.state_dict(), "%s/netD_epoch_%d.pth" % (opt.outf, epoch))  # expect: MA403
