"""What `majob validate` may import: the spec's libraries, never a heavy or cloud SDK.

A new top-level import that drags torch (seconds), optuna, msprobe, libcst, the OBS SDK or a
huaweicloudsdk* module onto validate's path fails here, in a fresh interpreter. Which modules,
never how long: timings are for bench/cli_startup.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
