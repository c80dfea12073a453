"""``majob check`` speed against the parse ceiling, and ``majob migrate`` on the same corpus.

Generates at least 100,000 lines of training-script-like Python (argparse, datasets and loaders,
models, epoch loops, DataParallel/DDP, cuda calls, checkpoints, logging, plain helpers) into a
temporary directory, then times, as separate processes and in interleaved rounds:

- ``python -m compileall -q -f DIR`` (``-f``: it really compiles every file, each round): the
  parse ceiling, the peer;
- ``python -m compileall -q -f -j 0 DIR``: the same on every CPU, for reference;
- ``majob check DIR --target npu --format json`` (every rule on; by default one process per CPU
  for a tree this size, as flake8 and ruff do), and the same with ``-j 1``;
- ``majob migrate DIR --to npu-manual --diff``.

Every row runs in the caller's environment, with the bytecode of its own modules (the standard
library's, majob's and its libraries') cached as any installed program has it. (Until round 3 the
peer compiled under a fresh ``PYTHONPYCACHEPREFIX`` and the rows shared it: every majob run then
recompiled typer, pydantic and majob, ~0.8 s, and compileall its own imports, ~0.15 s.)

Prints the medians of the wall time and of the CPU time (user + system of the process and its
workers; steadier on a shared machine) and the ratios to serial compileall (goals, issue 22: check
at most 1.5x, migrate at most 3x).

    .venv/bin/python bench/check_speed.py [--lines 100000] [--rounds 3] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent


class Writer:
    """Builds one synthetic training script from randomly chosen, randomly named parts."""

    def __init__(self, rng: random.Random, index: int) -> None:
        self.rng = rng
        self.index = index
        self.lines: list[str] = []

    def name(self, stem: str) -> str:
        return f"{stem}_{self.rng.randrange(1000)}"

    def add(self, text: str) -> None:
        self.lines.extend(text.strip("\n").split("\n"))
        self.lines.append("")

    def header(self) -> None:
        self.add(f'"""Training script {self.index}: generated for the majob check benchmark."""')
        imports = [
            "import argparse",
            "import json",
            "import logging",
            "import math",
            "import os",
            "import time",
            "",
            "import numpy as np",
            "import torch",
            "import torch.distributed as dist",
            "import torch.nn as nn",
            "import torch.nn.functional as F",
            "from torch.utils.data import DataLoader, Dataset",
        ]
        if self.rng.random() < 0.5:
            imports.append("from torch.utils.data.distributed import DistributedSampler")
        if self.rng.random() < 0.3:
            imports.append("from torch.utils.tensorboard import SummaryWriter")
        if self.rng.random() < 0.3:
            imports.append("from torchvision import datasets, transforms")
        self.add("\n".join(imports))
        self.add(
            f'DATA_DIR = "./data/{self.name("set")}"\nOUTPUT_DIR = "./output"\n'
            "logger = logging.getLogger(__name__)"
        )

    def dataset(self) -> str:
        cls = self.name("Samples").title().replace("_", "")
        self.add(f'''
class {cls}(Dataset):
    """Samples from a .npz file, normalised on the fly."""

    def __init__(self, root, split="train", transform=None):
        data = np.load(os.path.join(root, f"{{split}}.npz"))
        self.x = torch.tensor(data["x"], dtype=torch.float32)
        self.y = torch.tensor(data["y"], dtype=torch.long)
        self.transform = transform
        self.mean = self.x.mean(dim=0, keepdim=True)
        self.std = self.x.std(dim=0, keepdim=True) + 1e-6

    def __len__(self):
        return len(self.y)

    def __getitem__(self, index):
        x = (self.x[index] - self.mean[0]) / self.std[0]
        if self.transform is not None:
            x = self.transform(x)
        return x, self.y[index]
''')
        return cls

    def model(self) -> str:
        cls = self.name("Net").title().replace("_", "")
        depth = self.rng.randint(2, 6)
        layers = "\n".join(
            f"        self.block{i} = nn.Sequential(nn.Linear(width, width), nn.BatchNorm1d(width),"
            " nn.ReLU())"
            for i in range(depth)
        )
        calls = "\n".join(f"        x = x + self.block{i}(x)" for i in range(depth))
        self.add(f"""
class {cls}(nn.Module):
    def __init__(self, features=32, width={self.rng.choice([64, 128, 256])}, classes=10):
        super().__init__()
        self.stem = nn.Linear(features, width)
{layers}
        self.head = nn.Linear(width, classes)
        self.dropout = nn.Dropout(p={self.rng.choice([0.1, 0.2, 0.5])})

    def forward(self, x):
        x = F.relu(self.stem(x))
{calls}
        return self.head(self.dropout(x))
""")
        return cls

    def helpers(self) -> None:
        for _ in range(self.rng.randint(2, 5)):
            kind = self.rng.randrange(4)
            fn = self.name("helper")
            if kind == 0:
                self.add(f'''
class {fn.title().replace("_", "")}Meter:
    """Keeps a running average."""

    def __init__(self, name, fmt=":f"):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = 0.0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / max(1, self.count)

    def __str__(self):
        return f"{{self.name}} {{self.val:.4f}} ({{self.avg:.4f}})"
''')
            elif kind == 1:
                self.add(f"""
def {fn}(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in topk:
            correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
            res.append(correct_k.mul_(100.0 / batch_size))
        return res
""")
            elif kind == 2:
                self.add(f"""
def {fn}(config, overrides=None):
    merged = dict(config)
    for key, value in (overrides or {{}}).items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {{**merged[key], **value}}
        elif value is not None:
            merged[key] = value
    try:
        steps = int(merged.get("steps", 0))
    except (TypeError, ValueError):
        steps = 0
    schedule = [math.cos(math.pi * i / max(1, steps)) for i in range(steps)]
    return merged, [s for s in schedule if s > 0]
""")
            else:
                self.add(f'''
def {fn}(state, is_best, path="{self.rng.choice(["./checkpoints", "ckpt", "/tmp/run"])}"):
    os.makedirs(path, exist_ok=True)
    filename = os.path.join(path, "checkpoint.pth.tar")
    torch.save(state, filename)
    if is_best:
        torch.save(state, os.path.join(path, "model_best.pth.tar"))
    logger.info("saved %s", filename)
''')

    def train(self, model_cls: str, dataset_cls: str) -> None:
        ddp = self.rng.random() < 0.5
        fn = self.name("train_one_epoch")
        self.add(f"""
def {fn}(model, loader, optimizer, epoch, args):
    model.train()
    total, seen = 0.0, 0
    start = time.time()
    for step, (images, target) in enumerate(loader):
        images = images.cuda(non_blocking=True)
        target = target.cuda(non_blocking=True)
        output = model(images)
        loss = F.cross_entropy(output, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item() * len(target)
        seen += len(target)
        if step % args.print_freq == 0:
            logger.info("epoch %d step %d loss %.4f (%.1fs)", epoch, step, total / seen,
                        time.time() - start)
    torch.cuda.synchronize()
    return total / max(1, seen)


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for images, target in loader:
            images, target = images.to(device), target.to(device)
            correct += (model(images).argmax(1) == target).sum().item()
            total += len(target)
    return correct / max(1, total)
""")
        flags = "\n".join(
            f'    parser.add_argument("--{flag}", type={typ}, default={default})'
            for flag, typ, default in self.rng.sample(
                [
                    ("epochs", "int", "90"),
                    ("lr", "float", "0.1"),
                    ("momentum", "float", "0.9"),
                    ("weight_decay", "float", "1e-4"),
                    ("batch_size", "int", "256"),
                    ("workers", "int", "4"),
                    ("print_freq", "int", "10"),
                    ("seed", "int", "0"),
                    ("warmup", "int", "5"),
                ],
                k=7,
            )
        )
        wrap = (
            '    dist.init_process_group(backend="nccl", init_method=args.dist_url,\n'
            "                            world_size=args.world_size, rank=args.rank)\n"
            "    model = nn.parallel.DistributedDataParallel(model.cuda(), device_ids=[args.gpu])\n"
            if ddp
            else "    model = nn.DataParallel(model).cuda()\n"
        )
        self.add(f"""
def main():
    parser = argparse.ArgumentParser(description="generated training script")
{flags}
    parser.add_argument("--print_freq", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=90)
    parser.add_argument("--dist_url", default="tcp://127.0.0.1:23456")
    parser.add_argument("--world_size", type=int, default=1)
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--gpu", type=int, default=0)
    args = parser.parse_args()
    torch.manual_seed(args.seed if hasattr(args, "seed") else 0)
    torch.cuda.manual_seed_all(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = {model_cls}()
{wrap}    train_set = {dataset_cls}(DATA_DIR, "train")
    loader = DataLoader(train_set, batch_size=64, shuffle=True, num_workers=2, pin_memory=True)
    test_loader = DataLoader({dataset_cls}(DATA_DIR, "test"), batch_size=256)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    best = 0.0
    history = []
    for epoch in range(args.epochs):
        loss = {fn}(model, loader, optimizer, epoch, args)
        accuracy = evaluate(model, test_loader, device)
        scheduler.step()
        history.append({{"epoch": epoch, "loss": loss, "accuracy": accuracy}})
        if accuracy > best:
            best = accuracy
            torch.save(model.state_dict(), os.path.join(OUTPUT_DIR, "best.pth"))
    with open("./output/history.json", "w") as handle:
        json.dump(history, handle)
    if torch.cuda.is_available():
        print(torch.cuda.memory_allocated(), torch.cuda.max_memory_allocated())


if __name__ == "__main__":
    main()
""")

    def build(self) -> str:
        self.header()
        dataset_cls = self.dataset()
        model_cls = self.model()
        self.helpers()
        for _ in range(self.rng.randint(1, 3)):
            self.model()
        self.helpers()
        self.train(model_cls, dataset_cls)
        return "\n".join(self.lines).rstrip() + "\n"


def generate(root: Path, min_lines: int, seed: int) -> tuple[int, int]:
    rng = random.Random(seed)
    lines = files = 0
    while lines < min_lines:
        text = Writer(rng, files).build()
        package = root / f"project_{files // 40:02d}"
        package.mkdir(exist_ok=True)
        (package / f"train_{files:04d}.py").write_text(text, encoding="utf-8")
        lines += text.count("\n")
        files += 1
    return files, lines


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv``."""
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr.decode()}")
    return elapsed, _children_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="majob-check-bench-") as tmp:
        corpus = Path(tmp) / "corpus"
        corpus.mkdir()
        files, lines = generate(corpus, args.lines, args.seed)
        majob = str(BIN / "majob")
        check = [majob, "check", str(corpus), "--target", "npu", "--format", "json"]
        check += ["--fail-on", "never"]
        compileall = [sys.executable, "-m", "compileall", "-q", "-f", str(corpus)]
        migrate = [majob, "migrate", str(corpus), "--to", "npu-manual", "--diff"]
        # (label, argv, goal as a multiple of the peer's wall time)
        rows: list[tuple[str, list[str], float | None]] = [
            ("python -m compileall -q -f (peer)", compileall, None),
            ("python -m compileall -q -f -j 0 (every CPU)", [*compileall, "-j", "0"], None),
            ("majob check --target npu", check, 1.5),
            ("majob check --target npu -j 1", [*check, "-j", "1"], None),
            ("majob migrate --to npu-manual --diff", migrate, 3.0),
        ]
        times: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in rows}
        for _ in range(args.rounds):  # interleaved, so a busy moment hits every row
            for label, argv, _ in rows:
                times[label].append(timed(argv))
        print(
            f"corpus: {files} files, {lines} lines (seed {args.seed}), {args.rounds} rounds, "
            f"medians, each a fresh process; {os.cpu_count()} CPUs"
        )
        print(f"{'':42} {'wall':>8}   {'ratio':>6}   {'cpu':>8}   {'ratio':>6}   goal")
        peer = times[rows[0][0]]
        peer_wall = statistics.median(t[0] for t in peer)
        peer_cpu = statistics.median(t[1] for t in peer)
        for label, _, goal in rows:
            wall = statistics.median(t[0] for t in times[label])
            cpu = statistics.median(t[1] for t in times[label])
            verdict = ""
            if goal is not None:
                met = "met" if wall <= goal * peer_wall else "NOT met"
                verdict = f"<= {goal:g}x: {met} (wall)"
            print(
                f"{label:<42} {wall:6.2f} s   {wall / peer_wall:5.2f}x   "
                f"{cpu:6.2f} s   {cpu / peer_cpu:5.2f}x   {verdict}"
            )


if __name__ == "__main__":
    main()
