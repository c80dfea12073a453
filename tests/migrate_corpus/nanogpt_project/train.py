"""nanoGPT train.py style: config globals overridden by configurator.py (which raises on any
unknown --key, so on ModelArts' --data_url), out_dir, np.memmap data, torch.compile."""
# data: shakespeare_char/train.bin
import os
import time

import numpy as np
import torch  # expect: MA305
import torch.nn as nn

out_dir = "out"  # expect: MA102
eval_interval = 2000
always_save_checkpoint = True
dataset = "shakespeare_char"
batch_size = 4
block_size = 8
max_iters = 2
device = "cuda"  # expect: MA304
compile = False
config_keys = [k for k, v in globals().items() if not k.startswith("_") and isinstance(v, (int, float, bool, str))]
exec(open("configurator.py").read())  # expect: MA107 @framework
config = {k: globals()[k] for k in config_keys}

ddp = int(os.environ.get("RANK", -1)) != -1
if ddp:
    torch.distributed.init_process_group(backend="nccl")  # expect: MA301, MA210
    ddp_local_rank = int(os.environ["LOCAL_RANK"])
    device = f"cuda:{ddp_local_rank}"  # expect: MA304
    master_process = int(os.environ["RANK"]) == 0
else:
    master_process = True
if master_process:
    os.makedirs(out_dir, exist_ok=True)
if not torch.cuda.is_available():  # expect: MA302
    device = "cpu"
torch.manual_seed(1337)
data_dir = os.path.join("data", dataset)  # expect: MA101


def get_batch(split):
    data = np.memmap(os.path.join(data_dir, f"{split}.bin"), dtype=np.uint16, mode="r")
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy(data[i : i + block_size].astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1 : i + 1 + block_size].astype(np.int64)) for i in ix])
    return x.to(device), y.to(device)


model = nn.Sequential(nn.Embedding(64, 16), nn.Linear(16, 64)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
if compile:
    model = torch.compile(model)  # expect: MA328 @framework
for iter_num in range(max_iters):
    X, Y = get_batch("train")
    loss = nn.functional.cross_entropy(model(X).view(-1, 64), Y.view(-1))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
if master_process:
    checkpoint = {"model": model.state_dict(), "iter_num": max_iters, "config": config}
    print(f"saving checkpoint to {out_dir}")
    torch.save(checkpoint, os.path.join(out_dir, "ckpt.pt"))
