"""Fixtures of the compiler tests: the golden specs (loaded with the real loader) and the
official SDK's request models. Tests run in importlib mode, so helpers are fixtures."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from majob.spec.load import load_spec
from majob.spec.models import JobSpec
from majob.spec.profiles import Profile

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "golden" / "compile"
SPEC_DIR = GOLDEN_DIR / "specs"
CASES = sorted(p.stem for p in SPEC_DIR.glob("*.yaml"))


@pytest.fixture(params=CASES)
def case(request: pytest.FixtureRequest) -> str:
    """The name of one golden spec (tests/golden/compile/specs/<case>.yaml)."""
    name: str = request.param
    return name


@pytest.fixture(scope="session")
def golden_dir() -> Path:
    return GOLDEN_DIR


@pytest.fixture(scope="session")
def load_case() -> Callable[[str], JobSpec]:
    """Load a golden spec, isolated from the user's profile and environment."""

    def load(case: str) -> JobSpec:
        return load_spec(
            SPEC_DIR / f"{case}.yaml", profile=Profile(), environ={}, check_files=False
        )

    return load


@pytest.fixture(scope="session")
def through_sdk_models() -> Callable[[dict[str, Any]], Any]:
    """A function: a body deserialised into the official SDK's ``CreateTrainingJobRequest``
    (its ``Job`` model and every nested model) the way the SDK itself does it, then serialised
    back.

    The SDK keeps only the keys its models declare and converts each value to the declared
    type, so a key it does not know, a misplaced object or a number where a string belongs
    comes back different (or gone).
    """
    from huaweicloudsdkcore.utils.http_utils import sanitize_for_serialization
    from huaweicloudsdkmodelarts.v1 import CreateTrainingJobRequest, Job, ModelArtsClient

    client = ModelArtsClient()  # no credentials, no endpoint: only its deserialiser is used

    def round_trip(body: dict[str, Any]) -> Any:
        request = client._deserialize(body, "CreateTrainingJobRequest")
        assert isinstance(request, CreateTrainingJobRequest)
        assert isinstance(request.body, Job)
        return sanitize_for_serialization(request.body)

    return round_trip
