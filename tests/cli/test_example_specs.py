"""The example specs are what newcomers copy: each must validate, compile for every stage, and
point editors at the schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.compile.rest import to_rest_body
from majob.compile.sdk import to_estimator
from majob.spec.load import load_spec
from majob.spec.models import STAGES
from majob.spec.profiles import Profile
from majob.spec.schema import SCHEMA_FILE

ROOT = Path(__file__).resolve().parents[2]
SPECS = sorted((ROOT / "job_specs").glob("*.yaml"))


def test_the_four_kinds_of_example_exist() -> None:
    names = {p.stem for p in SPECS}
    assert {"mnist", "ddp_resnet", "npu_resnet", "custom_image"} <= names


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_example_spec_validates_and_compiles(path: Path) -> None:
    assert path.read_text(encoding="utf-8").splitlines()[0] == (
        f"# yaml-language-server: $schema=../{SCHEMA_FILE}"
    )
    spec = load_spec(path, profile=Profile(), environ={})
    for stage in STAGES:
        body = to_rest_body(spec, stage)
        call = to_estimator(spec, stage)
        assert body["metadata"]["name"] == call.job_name
        compile(call.to_python(), str(path), "exec")
