"""The control: a compute-bound step (a wide MLP on batches already in memory), nothing to
fix."""

import torch

torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(
    torch.nn.Linear(256, 1024),
    torch.nn.ReLU(),
    torch.nn.Linear(1024, 1024),
    torch.nn.ReLU(),
    torch.nn.Linear(1024, 10),
)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=True)
data = torch.randn(8, 256, 256)
target = torch.randint(0, 10, (8, 256))
for step in range(10):
    loss = torch.nn.functional.cross_entropy(model(data[step % 8]), target[step % 8])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
