"""The per-user directories majob keeps its files in: configuration (``profiles.yaml``, the
credentials file) and caches (file hashes, upload records, the service's offerings).

Standard library only, and apart from the rest of ``storage``: ``majob validate`` finds the
profiles through it without loading anything else of the storage layer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where majob keeps per-user configuration: ``$MAJOB_CONFIG_DIR``, else
    ``$XDG_CONFIG_HOME/majob``, else ``~/.config/majob``."""
    env = os.environ if environ is None else environ
    if env.get("MAJOB_CONFIG_DIR"):
        return Path(env["MAJOB_CONFIG_DIR"])
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "majob"


def default_cache_dir() -> Path:
    """Where majob keeps its caches for this user: ``$MAJOB_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/majob``, else ``~/.cache/majob``."""
    explicit = os.environ.get("MAJOB_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "majob"
