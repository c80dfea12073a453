"""timm train.py style: env-var distributed setup, cudnn.benchmark, NativeScaler, CheckpointSaver."""
import argparse
import os
import time
from functools import partial

import torch  # expect: MA305
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as NativeDDP
from torch.utils.data import DataLoader, TensorDataset

torch.backends.cudnn.benchmark = True

parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
parser.add_argument("data_dir", metavar="DIR", nargs="?", default="")
parser.add_argument("--output", default="", type=str, metavar="PATH")
parser.add_argument("--experiment", default="", type=str)
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--amp", action="store_true", default=False)
parser.add_argument("--pin-mem", action="store_true", default=False)
parser.add_argument("--local_rank", default=0, type=int)


class NativeScaler:
    state_dict_key = "amp_scaler"

    def __init__(self):
        self._scaler = torch.cuda.amp.GradScaler()  # expect: MA302

    def __call__(self, loss, optimizer):
        self._scaler.scale(loss).backward()
        self._scaler.step(optimizer)
        self._scaler.update()


def get_outdir(path, *paths):
    outdir = os.path.join(path, *paths)
    os.makedirs(outdir, exist_ok=True)
    return outdir


class CheckpointSaver:
    def __init__(self, model, optimizer, checkpoint_dir=""):
        self.model = model
        self.optimizer = optimizer
        self.checkpoint_dir = checkpoint_dir

    def save_checkpoint(self, epoch):
        save_state = {"epoch": epoch, "state_dict": self.model.state_dict()}
        torch.save(save_state, os.path.join(self.checkpoint_dir, "last.pth.tar"))  # expect: MA403


def main():
    args, _ = parser.parse_known_args()  # expect: MA103
    args.distributed = "WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1
    args.device = "cuda:0" if torch.cuda.is_available() else "cpu"  # expect: MA302, MA304
    args.world_size = 1
    args.rank = 0
    if args.distributed:
        args.local_rank = int(os.environ.get("LOCAL_RANK", 0))
        if torch.cuda.is_available():  # expect: MA302
            args.device = "cuda:%d" % args.local_rank  # expect: MA304
            torch.cuda.set_device(args.local_rank)  # expect: MA302
        dist.init_process_group(backend="nccl" if torch.cuda.is_available() else "gloo", init_method="env://")  # expect: MA210, MA301, MA302
        args.world_size = dist.get_world_size()
        args.rank = dist.get_rank()
    device = torch.device(args.device)
    torch.manual_seed(42 + args.rank)
    model = nn.Linear(8, 2).to(device=device, memory_format=torch.channels_last)  # expect: MA325
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_scaler = NativeScaler() if args.amp else None
    amp_autocast = partial(torch.autocast, device_type=device.type, enabled=args.amp)
    if args.distributed:
        model = NativeDDP(model, device_ids=[args.local_rank] if device.type == "cuda" else None)  # expect: MA310
    dataset = TensorDataset(torch.randn(16, 8), torch.randint(0, 2, (16,)))
    loader = DataLoader(dataset, batch_size=8, shuffle=True, pin_memory=args.pin_mem)  # expect: MA202
    saver = None
    if args.rank == 0:
        exp_name = args.experiment or time.strftime("%Y%m%d-%H%M%S")
        output_dir = get_outdir(args.output if args.output else "./output/train", exp_name)  # expect: MA102
        saver = CheckpointSaver(model, optimizer, checkpoint_dir=output_dir)
    for epoch in range(args.epochs):
        for input, target in loader:
            input, target = input.to(device, non_blocking=True), target.to(device, non_blocking=True)
            with amp_autocast():
                loss = nn.functional.cross_entropy(model(input), target)
            optimizer.zero_grad()
            if loss_scaler is not None:
                loss_scaler(loss, optimizer)
            else:
                loss.backward()
                optimizer.step()
            if device.type == "cuda":  # expect: MA310
                torch.cuda.synchronize()  # expect: MA302
            break
        if saver is not None:
            saver.save_checkpoint(epoch)  # expect: MA401


if __name__ == "__main__":
    main()
