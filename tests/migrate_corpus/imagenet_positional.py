"""pytorch/examples imagenet (2023) style: a positional data dir, main_worker(gpu, ngpus, args),
save_checkpoint with a model_best copy, --dist-url tcp default, --world-size."""
# data: train/images.npy, train/labels.npy
import argparse
import os
import shutil

import numpy as np
import torch  # expect: MA305
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
parser.add_argument("data", metavar="DIR", nargs="?", default="imagenet", help="path to dataset")  # expect: MA101 @positional
parser.add_argument("-a", "--arch", metavar="ARCH", default="resnet18")  # clean: @false-alarm
parser.add_argument("--epochs", default=1, type=int)
parser.add_argument("--resume", default="", type=str, metavar="PATH")
parser.add_argument("--world-size", default=-1, type=int)  # expect: MA106 @multinode
parser.add_argument("--rank", default=-1, type=int)
parser.add_argument("--dist-url", default="tcp://224.66.41.62:23456", type=str)  # expect: MA208 @multinode
parser.add_argument("--dist-backend", default="nccl", type=str)  # expect: MA301
parser.add_argument("--gpu", default=None, type=int)
parser.add_argument("--multiprocessing-distributed", action="store_true")


def main():
    args = parser.parse_args()  # expect: MA103, MA104
    args.distributed = args.world_size > 1 or args.multiprocessing_distributed
    ngpus_per_node = torch.cuda.device_count()  # expect: MA302
    if args.multiprocessing_distributed:
        args.world_size = ngpus_per_node * args.world_size
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        main_worker(args.gpu, ngpus_per_node, args)


def main_worker(gpu, ngpus_per_node, args):
    if args.distributed:
        dist.init_process_group(backend=args.dist_backend, init_method=args.dist_url,
                                world_size=args.world_size, rank=args.rank)
    model = nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), 0.1)
    traindir = os.path.join(args.data, "train")
    images = torch.from_numpy(np.load(os.path.join(traindir, "images.npy")))
    labels = torch.from_numpy(np.load(os.path.join(traindir, "labels.npy")))
    loader = DataLoader(TensorDataset(images, labels), batch_size=8, shuffle=True)  # expect: MA202
    for epoch in range(args.epochs):
        for inputs, target in loader:
            if args.gpu is not None and torch.cuda.is_available():  # expect: MA302
                inputs = inputs.cuda(args.gpu, non_blocking=True)  # expect: MA303
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(inputs), target.long()).backward()
            optimizer.step()
        if not args.multiprocessing_distributed or args.rank % ngpus_per_node == 0:
            save_checkpoint({"epoch": epoch + 1, "state_dict": model.state_dict()}, True)  # expect: MA401


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):  # expect: MA102
    torch.save(state, filename)  # expect: MA204, MA403
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")  # expect: MA102


if __name__ == "__main__":
    main()
