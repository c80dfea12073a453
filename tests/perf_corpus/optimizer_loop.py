"""Slow: the optimizer updates many parameter tensors one by one (AdamW with foreach=False:
about a dozen operators per tensor) where a multi-tensor or fused update would do."""

import torch

torch.manual_seed(0)
layers = [torch.nn.Linear(64, 64) for _ in range(24)]
model = torch.nn.Sequential(*layers)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, amsgrad=True, foreach=False)
data = torch.randn(512, 64)
for step in range(10):
    batch = data[(step % 8) * 64 : (step % 8) * 64 + 64]
    loss = model(batch).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
