import argparse
import os
import shutil

import torch
import torch.multiprocessing as mp


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    torch.save(state, filename)
    if is_best:
        shutil.copyfile(filename, os.path.join(os.path.dirname(filename), "model_best.pth.tar"))


def main_worker(gpu, ngpus, args):
    for epoch in range(args.epochs):
        save_checkpoint({"epoch": epoch}, True, filename=os.path.join(args.train_url, "checkpoint.pth.tar"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--train_url", type=str, default=".", help="ModelArts passes the train_url channel's local directory here")
    args, _unknown = parser.parse_known_args()
    if args.epochs > 10:
        mp.spawn(main_worker, nprocs=2, args=(2, args))
    else:
        main_worker(0, 1, args)
