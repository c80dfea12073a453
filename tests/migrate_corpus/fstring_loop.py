"""Plain-loop tutorial style: Path('runs') / name, f-string data and checkpoint names, torch.amp with device strings."""
import argparse
import os
from pathlib import Path

import torch  # expect: MA305
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.tensorboard import SummaryWriter


def evaluate(model, loader, device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            correct += (model(x).argmax(1) == y).sum().item()
    return correct / len(loader.dataset)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--name", default="baseline")
    parser.add_argument("--amp", action="store_true")
    args = parser.parse_args()  # expect: MA103, MA104
    device = "cuda" if torch.cuda.is_available() else "cpu"  # expect: MA302, MA304
    torch.manual_seed(0)
    run_dir = Path("runs") / args.name  # expect: MA102
    run_dir.mkdir(parents=True, exist_ok=True)
    writer = SummaryWriter(log_dir=str(run_dir))
    if os.path.exists(f"data/{args.name}.pt"):  # expect: MA101
        x, y = torch.load(f"data/{args.name}.pt")  # expect: MA101
    else:
        x, y = torch.randn(32, 8), torch.randint(0, 2, (32,))
    loader = DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True, pin_memory=device == "cuda")  # expect: MA310
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda", enabled=args.amp)  # expect: MA304
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        for step, (xb, yb) in enumerate(loader):
            xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.amp):  # expect: MA304
                loss = nn.functional.cross_entropy(model(xb), yb)
            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            writer.add_scalar("train/loss", loss.item(), epoch * len(loader) + step)
            if step == 1:
                break
        acc = evaluate(model, loader, device)
        if acc >= best:
            best = acc
            os.makedirs("checkpoints", exist_ok=True)  # expect: MA102
            torch.save({"model": model.state_dict(), "epoch": epoch}, f"checkpoints/{args.name}_best.pt")  # expect: MA102, MA401, MA403
    writer.close()


if __name__ == "__main__":
    main()
