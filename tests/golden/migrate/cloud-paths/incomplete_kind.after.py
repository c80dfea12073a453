import argparse
import os
from types import SimpleNamespace

import numpy as np


def get_cfg():
    cfg = SimpleNamespace()
    cfg.OUTPUT_DIR = "./output"
    return cfg


parser = argparse.ArgumentParser()
parser.add_argument("--data_url", type=str, default="./data", help="ModelArts passes the data_url channel's local directory here")
args, _unknown = parser.parse_known_args()
x = np.load(os.path.join(args.data_url, "x.npy"))
np.save("output/y.npy", x)
