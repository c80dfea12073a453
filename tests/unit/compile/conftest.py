from __future__ import annotations

import pytest
from compile_cases import CASES


@pytest.fixture(params=CASES)
def case(request: pytest.FixtureRequest) -> str:
    """The name of one golden spec (tests/golden/compile/specs/<case>.yaml)."""
    name: str = request.param
    return name
