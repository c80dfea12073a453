import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
args, _ = parser.parse_known_args()
model = nn.Linear(2, 2)
model = torch.nn.DataParallel(model).cuda()
