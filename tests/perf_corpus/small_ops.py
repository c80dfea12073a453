"""Slow: host-bound. The model applies hundreds of tiny operators in a Python loop, one
feature at a time, where one vectorised operation would do."""

import torch


class PerFeature(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(96))
        self.head = torch.nn.Linear(96, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        columns = []
        for i in range(x.shape[1]):  # should be x * self.scale
            columns.append(torch.relu(x[:, i] * self.scale[i] + 0.1))
        return self.head(torch.stack(columns, dim=1))


torch.manual_seed(0)
model = PerFeature()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
data = torch.randn(256, 96)
target = torch.randint(0, 10, (256,))
for step in range(10):
    batch = slice((step % 8) * 32, (step % 8) * 32 + 32)
    loss = torch.nn.functional.cross_entropy(model(data[batch]), target[batch])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
