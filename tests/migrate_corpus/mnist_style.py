"""pytorch/examples mnist style: hard-coded data and model files in the calls."""
import argparse

import numpy as np
import torch  # expect: MA305
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def train(model, device, train_loader, optimizer):
    model.train()
    for data, target in train_loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        F.cross_entropy(model(data), target).backward()
        optimizer.step()
        break


def main():
    parser = argparse.ArgumentParser(description="PyTorch MNIST Example")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--no-cuda", action="store_true", default=False)
    args = parser.parse_args()  # expect: MA103, MA104
    use_cuda = not args.no_cuda and torch.cuda.is_available()  # expect: MA302
    device = torch.device("cuda" if use_cuda else "cpu")  # expect: MA304
    torch.manual_seed(1)
    try:
        images = np.load("./data/mnist/train_images.npy")  # expect: MA101
    except FileNotFoundError:
        images = np.random.rand(16, 28 * 28).astype(np.float32)
    dataset = TensorDataset(torch.from_numpy(images), torch.randint(0, 10, (len(images),)))
    train_loader = DataLoader(dataset, batch_size=8, shuffle=True)
    model = nn.Linear(28 * 28, 10).to(device)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    for epoch in range(1, args.epochs + 1):
        train(model, device, train_loader, optimizer)
    torch.save(model.state_dict(), "mnist_cnn.pt")  # expect: MA102


if __name__ == "__main__":
    main()
