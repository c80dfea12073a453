import os

import torch
import torch_npu

local_rank = int(os.environ.get("LOCAL_RANK", 0))
model = torch.nn.Linear(2, 2).to(f"npu:{local_rank}")
x = torch.zeros(2).to("npu:0")
y = torch.zeros(2).to("cpu")
