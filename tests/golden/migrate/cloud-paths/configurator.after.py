import os

import torch

out_dir = "out"
dataset = "shakespeare"
data_url = "./data"  # ModelArts passes --data_url: the configurator sets it
train_url = out_dir  # ModelArts passes --train_url: the configurator sets it
exec(open("configurator.py").read())
data_dir = os.path.join(data_url, dataset)
os.makedirs(train_url, exist_ok=True)
torch.save({}, os.path.join(train_url, "ckpt.pt"))
x = open(os.path.join(data_dir, "train.bin"), "rb").read()
