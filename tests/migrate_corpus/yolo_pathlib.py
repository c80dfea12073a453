"""YOLOv5 train.py style: pathlib save_dir under runs/, RANK/LOCAL_RANK from os.getenv, opt object."""
import argparse
import os
from copy import deepcopy
from pathlib import Path

import torch  # expect: MA305
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

FILE = Path(__file__).resolve()
ROOT = FILE.parents[0]
LOCAL_RANK = int(os.getenv("LOCAL_RANK", -1))
RANK = int(os.getenv("RANK", -1))
WORLD_SIZE = int(os.getenv("WORLD_SIZE", 1))


def select_device(device=""):
    cuda = device != "cpu" and torch.cuda.is_available()  # expect: MA302
    return torch.device("cuda:0" if cuda else "cpu")  # expect: MA304


def train(opt, device):
    save_dir = Path(opt.save_dir)
    w = save_dir / "weights"
    (w.parent if opt.evolve else w).mkdir(parents=True, exist_ok=True)
    last, best = w / "last.pt", w / "best.pt"
    cuda = device.type != "cpu"
    model = nn.Linear(8, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.cuda.amp.GradScaler(enabled=cuda)  # expect: MA302
    dataset = TensorDataset(torch.randn(16, 8), torch.randint(0, 2, (16,)))
    sampler = None if LOCAL_RANK == -1 else DistributedSampler(dataset, shuffle=True)
    loader = DataLoader(dataset, batch_size=8, shuffle=sampler is None, sampler=sampler, pin_memory=True)
    if cuda and RANK != -1:
        model = DDP(model, device_ids=[LOCAL_RANK], output_device=LOCAL_RANK)
    for epoch in range(opt.epochs):
        if RANK != -1:
            loader.sampler.set_epoch(epoch)
        for imgs, targets in loader:
            imgs = imgs.to(device, non_blocking=True).float()
            with torch.cuda.amp.autocast(cuda):  # expect: MA302
                loss = nn.functional.cross_entropy(model(imgs), targets.to(device))
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            break
        if RANK in {-1, 0}:
            ckpt = {"epoch": epoch, "model": deepcopy(model.module if hasattr(model, "module") else model).half()}
            torch.save(ckpt, last)  # expect: MA401, MA403
            del ckpt


def parse_opt():
    parser = argparse.ArgumentParser()
    parser.add_argument("--weights", type=str, default="yolov5s.pt")  # expect: MA101
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--device", default="")
    parser.add_argument("--evolve", action="store_true")
    parser.add_argument("--project", default=ROOT / "runs/train")  # expect: MA102
    parser.add_argument("--name", default="exp")
    return parser.parse_known_args()[0]  # expect: MA103


def main(opt):
    opt.save_dir = str(Path(opt.project) / opt.name)
    device = select_device(opt.device)
    if LOCAL_RANK != -1:
        if torch.cuda.is_available():  # expect: MA302
            torch.cuda.set_device(LOCAL_RANK)  # expect: MA302
            device = torch.device("cuda", LOCAL_RANK)  # expect: MA304
        dist.init_process_group(backend="nccl" if dist.is_nccl_available() else "gloo")  # expect: MA210, MA301, MA313
    if os.path.exists(opt.weights):
        ckpt = torch.load(opt.weights, map_location="cpu")
    train(opt, device)


if __name__ == "__main__":
    main(parse_opt())
