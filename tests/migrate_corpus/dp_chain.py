"""A 2018 multi-GPU script: torch.nn.DataParallel(model).cuda() in one chain, a hard-coded
rendezvous for its multi-node mode, MASTER_ADDR set in code, --world-size with a dash."""
# data: train.npy
import argparse
import os

import numpy as np
import torch  # expect: MA305
import torch.distributed as dist
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser()
parser.add_argument("--data_dir", default="./datasets", type=str)  # expect: MA101
parser.add_argument("--save_dir", default="./snapshots", type=str)  # expect: MA102
parser.add_argument("--epochs", default=1, type=int)
parser.add_argument("--world-size", default=1, type=int)  # expect: MA106 @multinode
parser.add_argument("--rank", default=0, type=int)
args, _ = parser.parse_known_args()  # expect: MA103

if args.world_size > 1:
    os.environ["MASTER_ADDR"] = "127.0.0.1"  # expect: MA207 @multinode
    os.environ["MASTER_PORT"] = "29500"  # expect: MA207 @multinode
    dist.init_process_group("gloo", rank=args.rank, world_size=args.world_size)
torch.manual_seed(0)
features = torch.from_numpy(np.load(os.path.join(args.data_dir, "train.npy"))).float()
loader = DataLoader(TensorDataset(features, torch.randint(0, 2, (len(features),))), batch_size=8, shuffle=True)  # expect: MA202
model = nn.Linear(8, 2)
if torch.cuda.is_available():  # expect: MA302
    model = torch.nn.DataParallel(model).cuda()  # expect: MA201, MA212, MA303
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(args.epochs):
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
os.makedirs(args.save_dir, exist_ok=True)
torch.save(model.state_dict(), os.path.join(args.save_dir, "model.pth"))  # expect: MA204, MA205
