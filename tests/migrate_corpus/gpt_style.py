"""nanoGPT style: config globals, out_dir, np.memmap data, no argparse."""
import os

import numpy as np
import torch  # expect: MA305
import torch.nn as nn

out_dir = "out"  # expect: MA102
dataset = "shakespeare"
batch_size = 4
block_size = 8
device = "cuda"  # expect: MA304
dtype = "float32"
data_dir = os.path.join("data", dataset)  # expect: MA101


def get_batch(split):
    path = os.path.join(data_dir, f"{split}.bin")
    if os.path.exists(path):
        data = np.memmap(path, dtype=np.uint16, mode="r")
    else:
        data = np.arange(256, dtype=np.uint16) % 64
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([torch.from_numpy(data[i : i + block_size].astype(np.int64)) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1 : i + 1 + block_size].astype(np.int64)) for i in ix])
    return x, y


if not torch.cuda.is_available():  # expect: MA302
    device = "cpu"
torch.manual_seed(1337)
model = nn.Sequential(nn.Embedding(64, 16), nn.Linear(16, 64)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
os.makedirs(out_dir, exist_ok=True)
X, Y = get_batch("train")
logits = model(X.to(device))
loss = nn.functional.cross_entropy(logits.view(-1, 64), Y.to(device).view(-1))
loss.backward()
optimizer.step()
print(f"saving checkpoint to {out_dir}")
checkpoint = {"model": model.state_dict(), "iter_num": 1}
torch.save(checkpoint, os.path.join(out_dir, "ckpt.pt"))
