"""``majob.compile`` stays light: the CLI imports it for ``majob compile``, which must start
fast and work without the cloud SDKs installed."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("huaweicloudsdk", "obs", "torch", "libcst", "ruamel")


def test_importing_the_compilers_loads_no_cloud_sdk() -> None:
    code = "import json, sys\nimport majob.compile\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout
    loaded = json.loads(out)
    heavy = [m for m in loaded if m.split(".")[0].startswith(HEAVY)]
    assert heavy == []
    assert "majob.compile.sdk" in loaded and "majob.compile.rest" in loaded
