"""The golden specs of the compiler tests, loaded with the real loader.

(A uniquely named helper module rather than ``conftest``: test folders have no ``__init__.py``,
so a second ``conftest`` import elsewhere would shadow this one.)
"""

from __future__ import annotations

from pathlib import Path

from majob.spec.load import load_spec
from majob.spec.models import JobSpec
from majob.spec.profiles import Profile

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "golden" / "compile"
SPEC_DIR = GOLDEN_DIR / "specs"
CASES = sorted(p.stem for p in SPEC_DIR.glob("*.yaml"))


def load_case(case: str) -> JobSpec:
    """A golden spec, isolated from the user's profile and environment."""
    return load_spec(SPEC_DIR / f"{case}.yaml", profile=Profile(), environ={}, check_files=False)


def through_sdk_models(body: dict[str, object]) -> object:
    """``body`` deserialised into the official SDK's ``CreateTrainingJobRequest`` (its ``Job``
    model and every nested model) the way the SDK itself does it, then serialised back.

    The SDK keeps only the keys its models declare and converts each value to the declared type,
    so a key it does not know, a misplaced object or a number where a string belongs comes back
    different (or gone).
    """
    from huaweicloudsdkcore.utils.http_utils import sanitize_for_serialization
    from huaweicloudsdkmodelarts.v1 import CreateTrainingJobRequest, Job, ModelArtsClient

    client = ModelArtsClient()  # no credentials, no endpoint: only its deserialiser is used
    request = client._deserialize(body, "CreateTrainingJobRequest")
    assert isinstance(request, CreateTrainingJobRequest)
    assert isinstance(request.body, Job)
    return sanitize_for_serialization(request.body)
