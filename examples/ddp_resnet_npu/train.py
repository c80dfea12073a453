"""ResNet-style DDP training on Ascend NPUs: ../ddp_resnet/train.py as the migration guide
changes it.

The changes: ``import torch_npu`` and ``from torch_npu.contrib import transfer_to_npu`` at the top
(transfer_to_npu maps the torch.cuda calls and "cuda" devices below to the NPU) and the hccl
backend. It is meant for Ascend hardware (the Ascend-Powered-Engine); on a machine without NPUs the
local stage runs it on the CPU through majob's torch_npu stand-in (a smoke test, see
docs/migrate.md).

The original notes, unchanged:

Written the way the ModelArts guide writes a multi-node PyTorch job: the platform starts the
boot file once per node with --init_method=tcp://<worker-0>:<port> --rank=<i> --world_size=<n>
(plus --data_url/--train_url), the script calls init_process_group with them, shards the data
with DistributedSampler (set_epoch every epoch) and saves model.module's weights from rank 0.
nccl on GPUs, gloo on CPU (the local stage). In 5 epochs on the 8x8 digits it reaches about 0.97
test accuracy on 1 node and 0.85-0.9 on 2 or 4 (the same global batch, split across the nodes).
"""

import argparse
import json
import os

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
import torch_npu  # noqa: F401  (registers the NPU device)
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler
from torch_npu.contrib import transfer_to_npu  # noqa: F401  (cuda -> npu)


class BasicBlock(nn.Module):
    def __init__(self, channels_in, channels_out, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels_out)
        self.conv2 = nn.Conv2d(channels_out, channels_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels_out)
        self.shortcut = nn.Sequential()
        if stride != 1 or channels_in != channels_out:
            self.shortcut = nn.Sequential(
                nn.Conv2d(channels_in, channels_out, 1, stride, bias=False),
                nn.BatchNorm2d(channels_out),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class SmallResNet(nn.Module):
    """A ResNet-18 in miniature: a stem, two stages of basic blocks, pooling, a classifier."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8))
        self.layer1 = BasicBlock(8, 8)
        self.layer2 = BasicBlock(8, 16, stride=2)
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = F.relu(self.stem(x))
        x = self.layer2(self.layer1(x))
        x = F.adaptive_avg_pool2d(x, 1)
        return self.fc(torch.flatten(x, 1))


def load_split(path, test_fraction=0.2, seed=0):
    data = np.load(path)
    images = torch.tensor(data["images"], dtype=torch.float32).unsqueeze(1) / 16.0
    labels = torch.tensor(data["labels"], dtype=torch.long)
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(seed))
    n_test = int(len(labels) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return TensorDataset(images[train], labels[train]), TensorDataset(images[test], labels[test])


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            correct += (model(x).argmax(1) == y).sum().item()
            total += len(y)
    return correct / total


def parse_args(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--data_url", required=True, help="input dir (digits.npz)")
    parser.add_argument("--train_url", required=True, help="output dir (model.pth)")
    parser.add_argument("--init_method", default="tcp://127.0.0.1:6666")
    parser.add_argument("--rank", type=int, default=0, help="index of this node")
    parser.add_argument("--world_size", type=int, default=1, help="number of nodes")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--batch_size", type=int, default=64, help="global batch size")
    args, _ = parser.parse_known_args(argv)
    return args


def main(argv=None):
    args = parse_args(argv)
    use_cuda = torch.cuda.is_available()
    dist.init_process_group(
        backend="hccl",
        init_method=args.init_method,
        rank=args.rank,
        world_size=args.world_size,
    )
    local_rank = args.rank % torch.cuda.device_count() if use_cuda else 0
    device = torch.device(f"cuda:{local_rank}") if use_cuda else torch.device("cpu")
    torch.manual_seed(0)  # the same initial weights on every rank

    train_set, test_set = load_split(os.path.join(args.data_url, "digits.npz"))
    sampler = DistributedSampler(train_set, num_replicas=args.world_size, rank=args.rank)
    per_rank_batch = max(1, args.batch_size // args.world_size)
    train_loader = DataLoader(train_set, batch_size=per_rank_batch, sampler=sampler)
    test_loader = DataLoader(test_set, batch_size=256)

    model = SmallResNet().to(device)
    model = DistributedDataParallel(model, device_ids=[local_rank] if use_cuda else None)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        if args.rank == 0:
            print(f"epoch {epoch}: test accuracy {evaluate(model.module, test_loader, device):.4f}")

    if args.rank == 0:
        accuracy = evaluate(model.module, test_loader, device)
        os.makedirs(args.train_url, exist_ok=True)
        torch.save(model.module.state_dict(), os.path.join(args.train_url, "model.pth"))
        with open(os.path.join(args.train_url, "metrics.json"), "w") as out:
            json.dump({"test_accuracy": accuracy, "world_size": args.world_size}, out)
        print(f"final test accuracy {accuracy:.4f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
