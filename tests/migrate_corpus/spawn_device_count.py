"""ImageNet/MoCo main_worker style: mp.spawn over torch.cuda.device_count(), rank % ngpus save, resume."""
import argparse
import os
import shutil

import torch  # expect: MA305
import torch.backends.cudnn as cudnn
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", default=1, type=int)
parser.add_argument("--resume", default="", type=str, metavar="PATH")
parser.add_argument("--world-size", default=1, type=int)  # expect: MA106
parser.add_argument("--rank", default=0, type=int)
parser.add_argument("--dist-backend", default="nccl", type=str)  # expect: MA301
parser.add_argument("--multiprocessing-distributed", action="store_true")


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):  # expect: MA102
    torch.save(state, filename)  # expect: MA204, MA403
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")  # expect: MA102


def main():
    args, _ = parser.parse_known_args()  # expect: MA103
    args.port = os.environ.get("PORT", "23456")
    ngpus_per_node = torch.cuda.device_count()  # expect: MA302
    if args.multiprocessing_distributed and ngpus_per_node > 0:
        args.world_size = ngpus_per_node * args.world_size
        mp.spawn(main_worker, nprocs=ngpus_per_node, args=(ngpus_per_node, args))
    else:
        main_worker(None, max(ngpus_per_node, 1), args)


def main_worker(gpu, ngpus_per_node, args):
    if args.multiprocessing_distributed:
        args.rank = args.rank * ngpus_per_node + (gpu or 0)
    if args.world_size > 1 or args.multiprocessing_distributed:
        backend = args.dist_backend if torch.cuda.is_available() else "gloo"  # expect: MA302
        dist.init_process_group(backend=backend, init_method="tcp://127.0.0.1:" + args.port, world_size=args.world_size, rank=args.rank)  # expect: MA208
    model = nn.Linear(8, 2)
    if gpu is not None:
        torch.cuda.set_device(gpu)  # expect: MA302
        model.cuda(gpu)  # expect: MA303
        model = nn.parallel.DistributedDataParallel(model, device_ids=[gpu])
    elif dist.is_initialized():
        model = nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.SGD(model.parameters(), 0.1)
    start_epoch = 0
    if args.resume and os.path.isfile(args.resume):
        loc = "cpu" if gpu is None else "cuda:{}".format(gpu)  # expect: MA304
        checkpoint = torch.load(args.resume, map_location=loc)
        start_epoch = checkpoint["epoch"]
        model.load_state_dict(checkpoint["state_dict"])
    cudnn.benchmark = True
    torch.manual_seed(0)
    dataset = TensorDataset(torch.randn(16, 8), torch.randint(0, 2, (16,)))
    train_sampler = DistributedSampler(dataset) if dist.is_initialized() else None
    loader = DataLoader(dataset, batch_size=8, shuffle=(train_sampler is None), sampler=train_sampler, pin_memory=True)
    for epoch in range(start_epoch, args.epochs):
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        for images, target in loader:
            if gpu is not None:
                images = images.cuda(gpu, non_blocking=True)  # expect: MA303
                target = target.cuda(gpu, non_blocking=True)  # expect: MA303
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(images), target).backward()
            optimizer.step()
            break
        if not args.multiprocessing_distributed or (args.multiprocessing_distributed and args.rank % ngpus_per_node == 0):
            save_checkpoint({"epoch": epoch + 1, "state_dict": model.state_dict()}, False)  # expect: MA205


if __name__ == "__main__":
    main()
