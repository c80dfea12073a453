import argparse

import torch

parser = argparse.ArgumentParser()
args = parser.parse_args()
x = torch.zeros(2).cuda(async=True)
torch.save(x, "x.pt")
