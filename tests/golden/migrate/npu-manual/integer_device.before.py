import os

import torch

local_rank = int(os.environ.get("LOCAL_RANK", 0))
model = torch.nn.Linear(2, 2).to(local_rank)
x = torch.zeros(2).to(0)
y = torch.zeros(2).to("cpu")
