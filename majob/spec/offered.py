"""Does ModelArts offer the spec's flavor and engine? The offline answer, from what is on disk.

``majob validate`` needs no account and no network, so it checks against what majob already
knows: the documented catalogue (``spec/catalog.py``) and the lists a service gave before
(cached by pre-flight and ``majob flavors`` / ``majob engines``). Regions offer different
flavors and engines and the catalogue is not every region's whole offer, so an id found in
neither is a warning with the closest known one, not an error; ``majob validate --online`` asks
the service itself, and there an unknown id is an error.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from majob.spec.catalog import ENGINES, FLAVORS, Offerings
from majob.spec.models import JobSpec
from majob.spec.positions import Loc, Positions
from majob.spec.safe_yaml import YamlRefused, compose, read_text, to_plain
from majob.text import did_you_mean


@dataclass(frozen=True)
class Unoffered:
    """A field whose value no known list offers, and what to say about it."""

    loc: Loc
    value: str
    message: str

    @property
    def path(self) -> str:
        return ".".join(str(part) for part in self.loc)


def known_offerings(cached: Iterable[Offerings] = ()) -> tuple[Offerings, str]:
    """The catalogue and the ``cached`` lists as one, and words for where they come from."""
    lists = list(cached)
    flavors = {f.id: f for f in FLAVORS}
    engines = {(e.name, e.version): e for e in ENGINES}
    for offerings in lists:
        flavors.update((f.id, f) for f in offerings.flavors)
        engines.update(((e.name, e.version), e) for e in offerings.engines)
    source = "majob's catalogue" + (" or the service's cached lists" if lists else "")
    return Offerings(tuple(flavors.values()), tuple(engines.values())), source


def unoffered(spec: JobSpec, known: Offerings, source: str) -> list[Unoffered]:
    """The spec's flavor, engine or engine version that ``known`` does not list."""
    found: list[Unoffered] = []
    then = "`majob validate --online` checks the service's own list"
    flavor = spec.resources.flavor
    # A dedicated pool has flavors of its own (or none: a CPU pool), which no public list shows.
    if flavor is not None and spec.resources.pool is None and known.flavor(flavor) is None:
        close = did_you_mean(flavor, (f.id for f in known.flavors))
        message = f"{flavor!r} is not a flavor known to {source}; {close} ({then})"
        found.append(Unoffered(("resources", "flavor"), flavor, message))
    engine, version = spec.image.engine, spec.image.version
    if engine is None or version is None:
        return found
    names = known.engine_names()
    if engine not in names:
        close = did_you_mean(engine, names)
        message = f"{engine!r} is not an engine known to {source}; {close} ({then})"
        found.append(Unoffered(("image", "engine"), engine, message))
    elif version not in known.versions_of(engine):
        close = did_you_mean(version, known.versions_of(engine))
        message = f"{version!r} is not a version of {engine} known to {source}; {close} ({then})"
        found.append(Unoffered(("image", "version"), version, message))
    return found


def written_at(path: Path, item: Unoffered) -> str:
    """``file:line:col`` where the spec file writes ``item``'s value; the file alone when the
    value came from elsewhere (``--set``, a profile, an environment variable)."""
    label = str(path)
    positions = Positions(label)
    try:
        text = read_text(path)
        document = compose(text)
    except YamlRefused:
        return label
    if document is None:
        return label
    plain, _ = to_plain(document, positions, text)
    value: object = plain
    for part in item.loc:
        value = value.get(part) if isinstance(value, dict) else None
    if value != item.value:
        return label
    file, line, col = positions.find(item.loc)
    return f"{file}:{line}:{col}"
