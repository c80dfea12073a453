"""Slow: a host sync per sample. The per-sample losses are summed with .item() one by one
(on a GPU/NPU each .item() waits for the device)."""

import torch

torch.manual_seed(0)
model = torch.nn.Linear(16, 10)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
data = torch.randn(8192, 16)
target = torch.randint(0, 10, (8192,))
total = 0.0
for step in range(10):
    batch = slice((step % 2) * 4096, (step % 2) * 4096 + 4096)
    per_sample = torch.nn.functional.cross_entropy(
        model(data[batch]), target[batch], reduction="none"
    )
    for i in range(len(per_sample)):  # should be total += per_sample.sum() (on the device)
        total += per_sample[i].item()
    optimizer.zero_grad()
    per_sample.mean().backward()
    optimizer.step()
print(total)
