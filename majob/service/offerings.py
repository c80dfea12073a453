"""The flavors and engines a service offers, cached per endpoint and project for a while.

Pre-flight asks the service (``GET training-job-flavors`` / ``training-job-engines``), not a
built-in list, so every region's own offer counts. The answer is kept in majob's cache dir
(``$MAJOB_CACHE_DIR``, else ``~/.cache/majob``) under ``service/``, one file per endpoint and
project, for ``ttl`` seconds (``MAJOB_OFFERINGS_TTL``, default one hour), so a second submit
does not pay for two more requests.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from majob.service.base import TrainingService
from majob.spec.catalog import Engine, Flavor

DEFAULT_TTL = 3600.0


@dataclass(frozen=True)
class Offerings:
    flavors: tuple[Flavor, ...]
    engines: tuple[Engine, ...]

    def flavor(self, flavor_id: str) -> Flavor | None:
        return next((f for f in self.flavors if f.id == flavor_id), None)

    def engine_names(self) -> list[str]:
        return sorted({e.name for e in self.engines})

    def versions_of(self, name: str) -> list[str]:
        return sorted(e.version for e in self.engines if e.name == name)


def cache_file(endpoint: str, project_id: str, cache_dir: Path | None = None) -> Path:
    from majob.storage.dirs import default_cache_dir

    key = hashlib.sha256(f"{endpoint}\n{project_id}".encode()).hexdigest()[:16]
    return (cache_dir or default_cache_dir()) / "service" / f"offerings-{key}.json"


def _ttl() -> float:
    try:
        return float(os.environ.get("MAJOB_OFFERINGS_TTL", DEFAULT_TTL))
    except ValueError:
        return DEFAULT_TTL


def load_offerings(
    service: TrainingService, cache: Path | None, *, refresh: bool = False
) -> Offerings:
    """The service's flavors and engines, from ``cache`` when it is fresh enough."""
    if cache is not None and not refresh:
        try:
            if time.time() - cache.stat().st_mtime < _ttl():
                data = json.loads(cache.read_text(encoding="utf-8"))
                return Offerings(
                    tuple(Flavor(**f) for f in data["flavors"]),
                    tuple(Engine(**e) for e in data["engines"]),
                )
        except (OSError, ValueError, KeyError, TypeError):
            pass  # no cache, or an unreadable one: ask the service
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
