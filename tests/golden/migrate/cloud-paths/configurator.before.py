import os

import torch

out_dir = "out"
dataset = "shakespeare"
exec(open("configurator.py").read())
data_dir = os.path.join("data", dataset)
os.makedirs(out_dir, exist_ok=True)
torch.save({}, os.path.join(out_dir, "ckpt.pt"))
x = open(os.path.join(data_dir, "train.bin"), "rb").read()
