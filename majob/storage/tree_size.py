"""How many bytes the files under a local folder hold: a run directory's size, an emulated
share's or a node's /cache use."""

from __future__ import annotations

import os
from pathlib import Path


def tree_size(path: Path) -> int:
    """Bytes of the files under ``path``; symlinks count as themselves, never followed (0 when
    ``path`` is missing)."""
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(directory, name)).st_size
            except OSError:
                continue  # removed while we looked
    return total
