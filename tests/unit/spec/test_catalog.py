"""The documented catalogue: it covers the example specs, its entries are consistent, and a
service's answer reads into the same types."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.spec.catalog import ENGINES, FLAVORS, Engine, Flavor
from majob.spec.load import load_spec

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("path", sorted((ROOT / "job_specs").glob("*.yaml")), ids=lambda p: p.name)
def test_the_example_specs_flavors_and_engines_are_in_the_catalogue(path: Path) -> None:
    spec = load_spec(path)
    flavor = next(f for f in FLAVORS if f.id == spec.resources.flavor)
    assert spec.resources.nodes <= flavor.max_num
    if spec.image.engine is not None:
        engine = next(
            e for e in ENGINES if (e.name, e.version) == (spec.image.engine, spec.image.version)
        )
        assert engine.is_ascend == spec.is_ascend == flavor.is_ascend


def test_entries_are_unique_and_consistent() -> None:
    assert len({f.id for f in FLAVORS}) == len(FLAVORS)
    assert len({e.id for e in ENGINES}) == len(ENGINES)
    assert len({(e.name, e.version) for e in ENGINES}) == len(ENGINES)
    for flavor in FLAVORS:
        assert (flavor.type == "CPU") == (not flavor.gpu and not flavor.npu)
        assert bool(flavor.npu) == (flavor.type == "Ascend") == flavor.is_ascend
    for engine in ENGINES:
        assert engine.image.endswith("/" + engine.version)


def test_an_answer_of_the_service_reads_into_the_same_type() -> None:
    item = {
        "flavor_id": "modelarts.bm.snt9.xlarge.8",
        "flavor_name": "Ascend: 8*Ascend-snt9(32GB) | ARM: 192 vCPUs 1536GB",
        "flavor_type": "Ascend",
        "billing": {"code": "modelarts.bm.snt9.xlarge.8", "unit_num": 1},
        "flavor_info": {
            "max_num": 16,
            "cpu": {"arch": "arm", "core_num": 192},
            "memory": {"size": 1536, "unit": "GB"},
            "npu": {"unit_num": "8", "product_name": "Ascend-snt9", "memory": "32GB"},
        },
    }
    assert Flavor.from_wire(item) in FLAVORS
    engine = {
        "engine_id": "pytorch-1.8.0",
        "engine_name": "PyTorch",
        "engine_version": "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
        "image_info": {"gpu_image_url": ENGINES[0].image, "cpu_image_url": ""},
    }
    assert Engine.from_wire(engine) == ENGINES[0]


@pytest.mark.parametrize(("value", "nodes"), [(8, 8), ("16", 16), (None, 1), ("", 1), (0, 1)])
def test_max_num_is_a_count_of_nodes(value: object, nodes: int) -> None:
    assert Flavor.from_wire({"flavor_id": "x", "flavor_info": {"max_num": value}}).max_num == nodes
