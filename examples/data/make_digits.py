"""Rebuild digits.npz from scikit-learn's bundled copy (no download)."""

from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits

digits = load_digits()
np.savez_compressed(
    Path(__file__).with_name("digits.npz"),
    images=digits.images.astype(np.uint8),
    labels=digits.target.astype(np.uint8),
)
