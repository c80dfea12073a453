"""The client's catalogue covers the example specs, and its entries are consistent."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.service.catalog import ENGINES, FLAVORS, find_engine, find_flavor
from majob.spec.load import load_spec

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("path", sorted((ROOT / "job_specs").glob("*.yaml")), ids=lambda p: p.name)
def test_the_example_specs_flavors_and_engines_are_in_the_catalogue(path: Path) -> None:
    spec = load_spec(path)
    flavor = find_flavor(spec.resources.flavor)
    assert flavor is not None and spec.resources.nodes <= flavor.max_num
    if spec.image.engine is not None:
        engine = find_engine(name=spec.image.engine, version=spec.image.version)
        assert engine is not None and engine.is_ascend == spec.is_ascend
        assert engine.is_ascend == (flavor.flavor_type == "Ascend")


def test_catalogue_entries_are_unique_and_consistent() -> None:
    assert len({f.flavor_id for f in FLAVORS}) == len(FLAVORS)
    assert len({e.engine_id for e in ENGINES}) == len(ENGINES)
    for flavor in FLAVORS:
        assert (flavor.flavor_type == "CPU") == (flavor.accelerators == 0)
        assert (flavor.npu > 0) == (flavor.flavor_type == "Ascend")
    for engine in ENGINES:
        assert find_engine(engine_id=engine.engine_id) is engine
