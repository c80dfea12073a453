"""The flavors and engines a service offers, cached per endpoint and project for a while.

Pre-flight asks the service (``GET training-job-flavors`` / ``training-job-engines``), not a
built-in list, so every region's own offer counts. The answer is kept in majob's cache dir
(``$MAJOB_CACHE_DIR``, else ``~/.cache/majob``) under ``service/``, one file per endpoint and
project, for ``ttl`` seconds (``MAJOB_OFFERINGS_TTL``, default one hour), so a second submit
does not pay for two more requests. The offline ``majob validate`` reads every cached list,
however old (``cached_offerings``), beside majob's catalogue: it never asks the service.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from majob.spec.catalog import Engine, Flavor

# One list of flavors and engines, wherever it comes from (the catalogue's type).
from majob.spec.catalog import Offerings as Offerings

if TYPE_CHECKING:  # validate reads the cache only: the service layer stays unimported
    from majob.service.base import TrainingService

DEFAULT_TTL = 3600.0


def cache_file(endpoint: str, project_id: str, cache_dir: Path | None = None) -> Path:
    from majob.storage.dirs import default_cache_dir

    key = hashlib.sha256(f"{endpoint}\n{project_id}".encode()).hexdigest()[:16]
    return (cache_dir or default_cache_dir()) / "service" / f"offerings-{key}.json"


def cached_offerings(cache_dir: Path | None = None) -> list[Offerings]:
    """Every list a service gave before and that is still on disk, however old: what the
    offline ``majob validate`` adds to the catalogue (no request is made)."""
    from majob.storage.dirs import default_cache_dir

    found = []
    for path in sorted(((cache_dir or default_cache_dir()) / "service").glob("offerings-*.json")):
        offerings = _read_cache(path)
        if offerings is not None:
            found.append(offerings)
    return found


def _read_cache(path: Path) -> Offerings | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Offerings(
            tuple(Flavor(**f) for f in data["flavors"]),
            tuple(Engine(**e) for e in data["engines"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None  # no cache, or an unreadable one


def _ttl() -> float:
    try:
        return float(os.environ.get("MAJOB_OFFERINGS_TTL", DEFAULT_TTL))
    except ValueError:
        return DEFAULT_TTL


def _fresh(cache: Path) -> bool:
    try:
        return time.time() - cache.stat().st_mtime < _ttl()
    except OSError:
        return False


def load_offerings(
    service: TrainingService, cache: Path | None, *, refresh: bool = False
) -> Offerings:
    """The service's flavors and engines, from ``cache`` when it is fresh enough."""
    if cache is not None and not refresh and _fresh(cache):
        cached = _read_cache(cache)
        if cached is not None:
            return cached
    offerings = Offerings(tuple(service.flavors()), tuple(service.engines()))
    if cache is not None:
        data = {
            "flavors": [f.to_cache() for f in offerings.flavors],
            "engines": [e.to_cache() for e in offerings.engines],
        }
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            temporary = cache.with_suffix(f".{os.getpid()}.tmp")
            temporary.write_text(json.dumps(data), encoding="utf-8")
            temporary.replace(cache)
        except OSError:
            pass  # a read-only cache dir costs two requests next time, nothing more
    return offerings
