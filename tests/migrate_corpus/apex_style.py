"""NVIDIA apex style: amp.initialize, apex DDP, formatted cuda device strings."""
import argparse

import torch  # expect: MA305
import torch.nn as nn

try:
    from apex import amp  # expect: MA327
    from apex.parallel import DistributedDataParallel as ApexDDP  # expect: MA327
except ImportError:
    amp = None
    ApexDDP = None

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", default=0, type=int)
parser.add_argument("--opt-level", default="O1", type=str)
args, _ = parser.parse_known_args()  # expect: MA103

use_gpu = torch.cuda.is_available()  # expect: MA302
device = torch.device("cuda:{}".format(args.local_rank) if use_gpu else "cpu")  # expect: MA304
torch.manual_seed(0)
model = nn.Linear(8, 2).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
if amp is not None and use_gpu:
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
x, y = torch.randn(8, 8).to(device), torch.randint(0, 2, (8,)).to(device)
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
optimizer.step()
if args.local_rank == 0:
    torch.save(model.state_dict(), "apex_model.pt")  # expect: MA102
