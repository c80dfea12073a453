import argparse

import torch.distributed as dist

parser = argparse.ArgumentParser()
parser.add_argument("--dist-url", "--init_method", default="tcp://224.66.41.62:23456", type=str)
parser.add_argument("--world-size", "--world_size", default=1, type=int)
parser.add_argument("--rank", default=0, type=int)
args, _ = parser.parse_known_args()
if args.world_size > 1:
    dist.init_process_group("gloo", init_method=args.dist_url, world_size=args.world_size, rank=args.rank)
