"""timm train.py style: a config parser beside the main parser, _parse_args() returning the
arguments, and the output folder made by a helper of the project (utils.get_outdir)."""
# data: train.npy
import argparse
import os
import time

import numpy as np
import torch  # expect: MA305
import torch.nn as nn
import yaml
from mini_timm import utils

config_parser = parser = argparse.ArgumentParser(description="Training Config", add_help=False)
parser.add_argument("-c", "--config", default="", type=str, metavar="FILE")

parser = argparse.ArgumentParser(description="PyTorch ImageNet Training")
parser.add_argument("data", nargs="?", metavar="DIR", const=None, default="data/imagenet")  # expect: MA101 @positional
parser.add_argument("--model", default="resnet50", type=str, metavar="MODEL")  # clean: @false-alarm
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--output", default="", type=str, metavar="PATH")
parser.add_argument("--experiment", default="", type=str, metavar="NAME")
parser.add_argument("--device", default="cuda", type=str)  # expect: MA304


def _parse_args():
    args_config, remaining = config_parser.parse_known_args()
    if args_config.config:
        with open(args_config.config, "r") as f:
            cfg = yaml.safe_load(f)
            parser.set_defaults(**cfg)
    args = parser.parse_args(remaining)  # expect: MA103, MA104
    args_text = yaml.safe_dump(args.__dict__, default_flow_style=False)
    return args, args_text


def main():
    args, args_text = _parse_args()
    args.rank = 0
    device = torch.device(args.device if torch.cuda.is_available() else "cpu")  # expect: MA302
    model = nn.Linear(8, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = torch.from_numpy(np.load(os.path.join(args.data, "train.npy"))).float()
    output_dir = None
    saver = None
    if utils.is_primary(args):
        exp_name = args.experiment or "-".join([time.strftime("%Y%m%d-%H%M%S"), args.model])
        output_dir = utils.get_outdir(args.output if args.output else "./output/train", exp_name)  # expect: MA102 @cross-file
        saver = utils.CheckpointSaver(model, checkpoint_dir=output_dir)
        with open(os.path.join(output_dir, "args.yaml"), "w") as f:
            f.write(args_text)
    for epoch in range(args.epochs):
        optimizer.zero_grad()
        model(data.to(device)).pow(2).mean().backward()
        optimizer.step()
        if saver is not None:
            saver.save_checkpoint(epoch)  # expect: MA401


if __name__ == "__main__":
    main()
