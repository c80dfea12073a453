"""The preset engines majob knows, each with the versions its id names.

The list itself is the documented catalogue (``majob.spec.catalog``); this module only adds the
parsed versions and the look-up that suggests the closest ids when a spec names one the
catalogue does not have.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from majob.image.engine_ids import EngineIdError, EngineVersion, closest_ids, parse_engine_version
from majob.spec.catalog import ENGINES


@dataclass(frozen=True)
class PresetEngine:
    name: str  # engine_name, e.g. PyTorch
    version: EngineVersion  # engine_version, parsed

    @property
    def id(self) -> str:
        return self.version.id


@functools.cache
def preset_engines() -> tuple[PresetEngine, ...]:
    """Every engine of the catalogue, in its order."""
    return tuple(
        PresetEngine(engine.name, parse_engine_version(engine.version)) for engine in ENGINES
    )


def find_preset(
    name: str, version: str, presets: tuple[PresetEngine, ...] | None = None
) -> PresetEngine:
    """The engine ``name`` / ``version``; ``EngineIdError`` naming the closest known ids."""
    known = preset_engines() if presets is None else presets
    for engine in known:
        if engine.id == version:
            if engine.name.lower() != name.lower():
                raise EngineIdError(
                    f"image.version {version} belongs to engine {engine.name!r}, not {name!r}",
                    hint=f"set image.engine: {engine.name}",
                )
            return engine
    parse_engine_version(version)  # a malformed id gets the parser's precise message
    suggestions = closest_ids(version, [engine.id for engine in known])
    raise EngineIdError(
        f"unknown preset engine {name} {version}",
        hint="closest known: " + ", ".join(suggestions) + " (engines vary by region: "
        "GET /v2/{project_id}/training-job-engines lists yours)",
    )
