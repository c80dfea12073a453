import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--train_url", type=str, default=".", help="ModelArts passes the train_url channel's local directory here")
args, _unknown = parser.parse_known_args()
x = torch.zeros(2).cuda(non_blocking=True)
torch.save(x, os.path.join(args.train_url, "x.pt"))
