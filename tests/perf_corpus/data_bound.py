"""Slow: the step waits for data. __getitem__ does heavy per-sample work and the DataLoader
runs it in the training process (num_workers=0)."""

import torch
from torch.utils.data import DataLoader, Dataset


class Augmented(Dataset):
    def __len__(self) -> int:
        return 2048

    def __getitem__(self, index: int):
        x = torch.randn(64)
        for _ in range(40):  # a per-sample "augmentation" pipeline
            x = torch.tanh(x * 1.01 + 0.01)
        return x, index % 10


model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
loader = DataLoader(Augmented(), batch_size=32, num_workers=0)
for step, (x, y) in enumerate(loader):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step == 9:
        break
