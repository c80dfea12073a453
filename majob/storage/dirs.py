"""The per-user directories majob keeps its files in: configuration (``profiles.yaml``, the
credentials file), caches (file hashes, upload records, the service's offerings) and data (the
emulator's state).

Apart from the rest of ``storage`` (and the standard library and platformdirs only):
``majob validate`` finds the profiles through it without loading anything else of the storage
layer.
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


def data_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where majob keeps per-user data: ``$MAJOB_DATA_DIR``, else the platform's user data dir
    (``$XDG_DATA_HOME/majob``, else ``~/.local/share/majob`` on Linux; platformdirs)."""
    env = os.environ if environ is None else environ
    if env.get("MAJOB_DATA_DIR"):
        return Path(env["MAJOB_DATA_DIR"])
    import platformdirs

    return Path(platformdirs.user_data_dir("majob", appauthor=False))
