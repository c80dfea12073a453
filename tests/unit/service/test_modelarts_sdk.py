"""Loading the ModelArts SDK: the lazy v1 packages hold every name the eager ones do."""

from __future__ import annotations

import subprocess
import sys


def test_the_lazy_sdk_packages_resolve_every_name_the_eager_ones_do() -> None:
    # In a fresh interpreter: majob's import leaves the SDK's v1 packages complete, only lazy.
    code = (
        "import sys\n"
        "from majob.service.modelarts_sdk import import_sdk\n"
        "_, _, v1 = import_sdk()\n"
        "loaded = sum(n.startswith('huaweicloudsdkmodelarts.v1.model.') for n in sys.modules)\n"
        "assert loaded < 100, loaded\n"
        "from huaweicloudsdkmodelarts.v1 import ModelArtsClient, ListTrainingJobsRequest\n"
        "from huaweicloudsdkmodelarts.v1.model import Job, JobMetadataResponse\n"
        "import re, pathlib, huaweicloudsdkmodelarts.v1.model as model\n"
        "names = re.findall(r'^from \\S+ import (\\w+)', "
        "pathlib.Path(model.__file__).read_text(), re.M)\n"
        "assert len(names) > 1000 and all(hasattr(model, n) for n in names)\n"
        "assert not hasattr(model, 'NoSuchModel')\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
