"""``majob.testing`` is for users' own tests: it must work where pytest is not installed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

# pytest made unimportable in a fresh interpreter (None in sys.modules: `import` raises), then
# the module imported and its context managers used for real.
WITHOUT_PYTEST = textwrap.dedent(
    """
    import sys
    sys.modules["pytest"] = None
    sys.modules["_pytest"] = None
    import os
    from majob.testing import (
        FAKE_BUCKET, fake_obs_server_running, obs_environment, obs_store_for,
    )
    with fake_obs_server_running() as server:
        with obs_store_for(server) as store:
            store.put_bytes(FAKE_BUCKET, "k", b"data")
        with obs_environment(server) as env:
            assert os.environ["MAJOB_OBS_ENDPOINT"] == server.endpoint == env["MAJOB_OBS_ENDPOINT"]
        assert "MAJOB_OBS_ENDPOINT" not in os.environ
        print(sorted(server.backend.bucket(FAKE_BUCKET).objects))
    try:
        import pytest
    except ImportError:
        print("pytest was blocked all along")
    """
)


def test_majob_testing_works_without_pytest() -> None:
    env = {k: v for k, v in os.environ.items() if k != "MAJOB_OBS_ENDPOINT"}
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_PYTEST], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['k']", "pytest was blocked all along"]


def test_the_fixtures_come_from_the_registered_plugin(pytestconfig: pytest.Config) -> None:
    plugin = pytestconfig.pluginmanager.get_plugin("majob.pytest_plugin")
    assert plugin is not None and plugin.__name__ == "majob.pytest_plugin"


def test_obs_env_points_the_cli_at_the_fake(
    obs_env: dict[str, str], fake_obs_server: object
) -> None:
    assert os.environ["MAJOB_OBS_ENDPOINT"] == obs_env["MAJOB_OBS_ENDPOINT"]
    assert obs_env["MAJOB_OBS_ENDPOINT"] == getattr(fake_obs_server, "endpoint", None)
