"""What `majob validate` may import: the spec's libraries, never a heavy or cloud SDK; and what
`majob obs sync` may (the OBS SDK's client, nothing heavy).

A new top-level import that drags torch (seconds), optuna, msprobe, libcst, the OBS SDK or a
huaweicloudsdk* module onto validate's path fails here, in a fresh interpreter. Which modules,
never how long: timings are for bench/cli_startup.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SPEC = Path(__file__).resolve().parents[2] / "job_specs" / "mnist.yaml"
FORBIDDEN = ("torch", "optuna", "msprobe", "libcst", "obs", "esdk", "huaweicloudsdk")


def _forbidden(name: str) -> bool:
    top = name.split(".")[0]
    return top in FORBIDDEN or top.startswith("huaweicloudsdk")


def test_validate_imports_no_heavy_or_cloud_module() -> None:
    # validate ends with os._exit after running atexit: the list is printed from there.
    code = (
        "import atexit, sys\nfrom majob.cli.app import main\n"
        "atexit.register(lambda: print('\\n'.join(sys.modules), file=sys.stderr))\n"
        f"sys.argv = ['majob', 'validate', {str(SPEC)!r}]\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    loaded = done.stderr.split()
    assert "majob.spec.models" in loaded  # the check ran validate, not a stub
    assert sorted(m for m in loaded if _forbidden(m)) == []


def test_the_check_knows_each_forbidden_family() -> None:
    assert _forbidden("torch.nn") and _forbidden("huaweicloudsdkmodelarts.v2")
    assert _forbidden("obs.client") and not _forbidden("majob.storage.obs")


SYNC_FORBIDDEN = (
    "torch",
    "optuna",
    "msprobe",
    "libcst",
    "pydantic",
    "rich",  # only for a progress bar on a terminal
    "requests",  # the SDK's opt-in session mode only
    "Crypto",  # the SDK's client-side encryption (its __init__, not loaded)
    "filelock",  # the hash cache's lock is flock
    "asyncio",
    "yaml",
    "ruamel",
)
SYNC = """
import sys
from majob.cli.app import main
sys.argv = ['majob', 'obs', 'sync', sys.argv[1], 'obs://majob-test/budget/']
try:
    main()
except SystemExit as stop:
    assert not stop.code, stop.code
print('\\n'.join(sys.modules), file=sys.stderr)
"""


@pytest.mark.slow
def test_obs_sync_imports_no_heavy_module(tmp_path: Path) -> None:
    from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY
    from majob.testing import FAKE_BUCKET, fake_obs_process

    source = tmp_path / "code"
    source.mkdir()
    for i in range(3):
        (source / f"f{i}.py").write_text(f"print({i})\n")
    with fake_obs_process(buckets=(FAKE_BUCKET,)) as fake:
        env = {
            **os.environ,
            "MAJOB_OBS_ENDPOINT": fake.endpoint,
            "HUAWEICLOUD_SDK_AK": DEFAULT_ACCESS_KEY,
            "HUAWEICLOUD_SDK_SK": DEFAULT_SECRET_KEY,
            "MAJOB_CACHE_DIR": str(tmp_path / "cache"),  # a first sync: the cache is written
        }
        done = subprocess.run(
            [sys.executable, "-c", SYNC, str(source)],
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
    assert done.returncode == 0, done.stderr
    assert "uploaded 3 files" in done.stdout
    loaded = done.stderr.split()
    assert "majob.storage.transfer" in loaded and "obs.client" in loaded
    tops = {name.split(".")[0] for name in loaded}
    assert sorted(t for t in tops if t in SYNC_FORBIDDEN or t.startswith("huaweicloudsdk")) == []
