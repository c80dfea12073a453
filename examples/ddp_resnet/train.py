"""ResNet-style digits classifier trained with DistributedDataParallel, one process per node.

Written the way the ModelArts guide writes a multi-node PyTorch job: the platform starts the
boot file once per node with --init_method=tcp://<worker-0>:<port> --rank=<i> --world_size=<n>
(plus --data_url/--train_url), the script calls init_process_group with them, shards the data
with DistributedSampler (set_epoch every epoch) and saves model.module's weights from rank 0.
nccl on GPUs, gloo on CPU (the local stage).

Seeded and deterministic where torch allows, with a one-cycle learning-rate schedule that ends
near zero, so the last epoch is the best or close to it. In 8 epochs on the 8x8 digits it ends at
0.93 test accuracy or better on 1, 2 or 4 nodes (the same global batch, split across the nodes:
0.95-0.98 in every run we measured, over several seeds).
Each epoch prints its mean training loss (over every node) and rank 0's test accuracy; rank 0
writes both to metrics.json next to model.pth.

Resumable (ModelArts' "Resumable Training"): after every epoch rank 0 saves the model,
optimizer and scheduler states to --train_url/ckpt/ (checkpoints.py: atomic, the last two
kept); at start every rank loads the newest good checkpoint of a run with the same settings
(ModelArts downloads that output, the spec's fault_tolerance.checkpoints, into every node's
container) and the ranks check they agree on the epoch before training goes on. The data order
depends on the epoch only (DistributedSampler.set_epoch), so a restarted job ends where an
uninterrupted one ends.
"""

import argparse
import json
import os
import random

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from checkpoints import load_latest, save_checkpoint
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

SEED = 0
CHECKPOINT_FOLDER = "ckpt"  # under --train_url: the spec's fault_tolerance.checkpoints


def seed_everything(seed):
    """The same initial weights on every rank and the same run every time on a given machine.

    warn_only: an op without a deterministic implementation (on some accelerators) warns
    instead of failing the job; on the CPU every op used here has one. Bits can still differ
    between CPU kinds (other vector kernels), which is why the recipe below must not be lucky.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    # cuBLAS is deterministic only with a fixed workspace; must be set before CUDA starts.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)


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
    """A ResNet-18 in miniature: a stem, two stages of basic blocks, pooling, a classifier.

    BatchNorm normalises each node's share of the batch (64 / 4 = 16 images on 4 nodes: enough
    for stable statistics). SyncBatchNorm would normalise the global batch, but it runs on GPUs
    only, and per-node statistics are what most DDP jobs use. The running statistics used for
    the test come from rank 0 (DDP broadcasts its buffers at every step); they match the final
    weights because the learning rate has decayed to almost nothing by then.
    """

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


def load_split(path, test_fraction=0.2, seed=SEED):
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
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.05, help="peak learning rate")
    parser.add_argument("--batch_size", type=int, default=64, help="global batch size")
    args, _ = parser.parse_known_args(argv)
    return args


def resume(folder, settings, model, optimizer, scheduler, device):
    """The epoch to start from and the history so far (0 and [] without a checkpoint to use);
    every rank must have found the same epoch, or the ranks would train different steps."""
    latest = load_latest(folder, lambda path: torch.load(path, map_location="cpu"))
    start, history = 0, []
    if latest is not None and latest[1]["settings"] != settings:
        print(f"checkpoint of epoch {latest[0]} is of other settings: not used")
    elif latest is not None:
        epoch, state = latest
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        start, history = epoch + 1, state["history"]
    found = torch.tensor([start, -start], device=device)
    dist.all_reduce(found, op=dist.ReduceOp.MAX)  # [max start, -min start]
    if found[0].item() != -found[1].item():
        raise RuntimeError(f"the ranks found different checkpoints (epoch {start} here)")
    if start:
        print(f"rank {dist.get_rank()}: resumed from the checkpoint of epoch {start - 1}")
    return start, history


def train(args, device, use_cuda, local_rank):
    train_set, test_set = load_split(os.path.join(args.data_url, "digits.npz"))
    # The sampler's seed (plus set_epoch) fixes each rank's share and order of every epoch.
    sampler = DistributedSampler(
        train_set, num_replicas=args.world_size, rank=args.rank, shuffle=True, seed=SEED
    )
    # The global batch stays the same on any number of nodes, so one learning rate fits all.
    per_rank_batch = max(1, args.batch_size // args.world_size)
    train_loader = DataLoader(train_set, batch_size=per_rank_batch, sampler=sampler)
    test_loader = DataLoader(test_set, batch_size=256)

    model = SmallResNet().to(device)
    model = DistributedDataParallel(model, device_ids=[local_rank] if use_cuda else None)
    optimizer = torch.optim.SGD(
        model.parameters(), lr=args.lr, momentum=0.9, nesterov=True, weight_decay=5e-4
    )
    # One cycle per run: a warm-up over the first 30% of the steps (BatchNorm statistics settle
    # before the big steps), then a cosine decay to lr/10^4, so the last epoch does not jump
    # around a minimum as a constant learning rate does.
    scheduler = torch.optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, total_steps=max(1, args.epochs * len(train_loader))
    )
    folder = os.path.join(args.train_url, CHECKPOINT_FOLDER)
    settings = {
        "epochs": args.epochs,
        "lr": args.lr,
        "batch_size": args.batch_size,
        "world_size": args.world_size,
    }
    start, history = resume(folder, settings, model.module, optimizer, scheduler, device)
    for epoch in range(start, args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        loss_sum = 0.0
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            scheduler.step()
            loss_sum += loss.item() * len(y)
        # This rank's [sum of the losses, number of samples], summed over the ranks: the mean
        # training loss of the epoch over the whole data set (float32: NPUs have no float64).
        totals = torch.tensor([loss_sum, len(sampler)], device=device)
        dist.all_reduce(totals)
        train_loss = (totals[0] / totals[1]).item()
        if args.rank == 0:
            accuracy = evaluate(model.module, test_loader, device)
            history.append({"epoch": epoch, "train_loss": train_loss, "test_accuracy": accuracy})
            print(f"epoch {epoch}: train loss {train_loss:.4f}, test accuracy {accuracy:.4f}")
            state = {
                "settings": settings,
                "model": model.module.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "history": history,
            }
            save_checkpoint(folder, epoch, state, torch.save)
        # No rank starts the next epoch before the checkpoint is complete: a job killed later
        # resumes at most one epoch back.
        dist.barrier()

    if args.rank == 0:
        accuracy = (
            history[-1]["test_accuracy"] if history else evaluate(model.module, test_loader, device)
        )
        os.makedirs(args.train_url, exist_ok=True)
        torch.save(model.module.state_dict(), os.path.join(args.train_url, "model.pth"))
        metrics = {"test_accuracy": accuracy, "world_size": args.world_size, "history": history}
        with open(os.path.join(args.train_url, "metrics.json"), "w") as out:
            json.dump(metrics, out)
        print(f"final test accuracy {accuracy:.4f}")


def main(argv=None):
    args = parse_args(argv)
    seed_everything(SEED)
    use_cuda = torch.cuda.is_available()
    dist.init_process_group(
        backend="nccl" if use_cuda else "gloo",
        init_method=args.init_method,
        rank=args.rank,
        world_size=args.world_size,
    )
    local_rank = args.rank % torch.cuda.device_count() if use_cuda else 0
    device = torch.device(f"cuda:{local_rank}") if use_cuda else torch.device("cpu")
    try:
        train(args, device, use_cuda, local_rank)
        # Rank 0 hosts the rendezvous store: no rank may leave while another still needs it.
        dist.barrier()
    finally:
        # Every rank, also after an error. Without it a rank can die of SIGABRT at exit
        # ("terminate called without an active exception"): a gloo worker thread frees the last
        # collective's work (here the barrier's) after the call has returned; freeing its tensors
        # needs the GIL, and a thread that asks for the GIL while the interpreter is shutting
        # down is ended by pthread_exit, whose unwinding through that C++ destructor calls
        # std::terminate. destroy_process_group joins those threads while Python is still alive.
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
