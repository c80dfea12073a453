import argparse
import shutil

import torch
import torch.multiprocessing as mp


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, "model_best.pth.tar")


def main_worker(gpu, ngpus, args):
    for epoch in range(args.epochs):
        save_checkpoint({"epoch": epoch}, True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    args = parser.parse_args()
    if args.epochs > 10:
        mp.spawn(main_worker, nprocs=2, args=(2, args))
    else:
        main_worker(0, 1, args)
