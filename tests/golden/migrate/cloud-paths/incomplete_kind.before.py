import argparse
from types import SimpleNamespace

import numpy as np


def get_cfg():
    cfg = SimpleNamespace()
    cfg.OUTPUT_DIR = "./output"
    return cfg


parser = argparse.ArgumentParser()
args = parser.parse_args()
x = np.load("data/x.npy")
np.save("output/y.npy", x)
