"""The fake ModelArts's own catalogue: it offers what the example specs ask for, its entries
are consistent, and it offers what the client's catalogue knows (the two are kept apart, as a
client and the real service are, so this test is what keeps them in step)."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.emulator.modelarts import catalog
from majob.spec import catalog as client_catalog
from majob.spec.load import load_spec

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("path", sorted((ROOT / "job_specs").glob("*.yaml")), ids=lambda p: p.name)
def test_the_example_specs_flavors_and_engines_are_offered(path: Path) -> None:
    spec = load_spec(path)
    flavor = catalog.find_flavor(spec.resources.flavor)
    assert flavor is not None and spec.resources.nodes <= flavor.max_num
    if spec.image.engine is not None:
        engine = catalog.find_engine(name=spec.image.engine, version=spec.image.version)
        assert engine is not None and engine.is_ascend == spec.is_ascend
        assert engine.is_ascend == (flavor.flavor_type == "Ascend")


def test_catalogue_entries_are_unique_and_consistent() -> None:
    flavors, engines = catalog.flavors(), catalog.engines()
    assert len({f.flavor_id for f in flavors}) == len(flavors)
    assert len({e.engine_id for e in engines}) == len(engines)
    for flavor in flavors:
        assert (flavor.flavor_type == "CPU") == (flavor.accelerators == 0)
        assert ("npu" in flavor.item["flavor_info"]) == (flavor.flavor_type == "Ascend")
    for engine in engines:
        assert catalog.find_engine(engine_id=engine.engine_id) is engine


def test_the_emulator_offers_what_the_client_knows() -> None:
    # Read as the client reads a live answer: the same flavors and engines, field for field.
    offered_flavors = [client_catalog.Flavor.from_wire(f.item) for f in catalog.flavors()]
    offered_engines = [client_catalog.Engine.from_wire(e.item) for e in catalog.engines()]
    assert offered_flavors == list(client_catalog.FLAVORS)
    assert offered_engines == list(client_catalog.ENGINES)
