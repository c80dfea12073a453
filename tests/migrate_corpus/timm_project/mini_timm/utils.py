"""timm.utils style helpers: the output folder and a checkpoint saver, defined away from train.py."""
import os

import torch


def get_outdir(path, *paths, inc=False):
    outdir = os.path.join(path, *paths)
    if not os.path.exists(outdir):
        os.makedirs(outdir)
    return outdir


def is_primary(args):
    return args.rank == 0


class CheckpointSaver:
    def __init__(self, model, checkpoint_dir="", max_history=2):
        self.model = model
        self.checkpoint_dir = checkpoint_dir
        self.max_history = max_history

    def save_checkpoint(self, epoch):
        path = os.path.join(self.checkpoint_dir, "last.pth.tar")
        torch.save({"epoch": epoch, "state_dict": self.model.state_dict()}, path)
        return path
