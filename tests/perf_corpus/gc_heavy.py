"""Slow: garbage-collector pauses. A large long-lived heap (an index of lists, many
references each) and many short-lived objects with reference cycles per step: each time the
collector's oldest generation runs it walks the whole heap again."""

import torch

index = [[None] * 200 for _ in range(40_000)]  # long-lived, 8 million references to walk


class Record:
    def __init__(self, value: float) -> None:
        self.value = value
        self.me = self  # a reference cycle: only the collector frees it


torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
data = torch.randn(512, 32)
target = torch.randint(0, 10, (512,))
for step in range(10):
    batch = slice((step % 8) * 64, (step % 8) * 64 + 64)
    loss = torch.nn.functional.cross_entropy(model(data[batch]), target[batch])
    records = [Record(float(i)) for i in range(10_000)]  # per-step bookkeeping, cyclic
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    del records
