"""``cloud_spec_digest``: the spec as a cloud job runs it, the same wherever the project is
checked out (a checkpoint folder's owner is recorded with it), and changed by what the job sees."""

from __future__ import annotations

import shutil
from pathlib import Path

from majob.spec.digest import cloud_spec_digest, spec_digest
from majob.spec.load import load_spec


def test_another_checkout_is_the_same_spec_to_the_cloud(project: Path, tmp_path: Path) -> None:
    clone = tmp_path / "elsewhere" / "clone"
    shutil.copytree(project, clone)
    here, there = load_spec(project / "spec.yaml"), load_spec(clone / "spec.yaml")
    assert str(here.code.dir) != str(there.code.dir)
    assert spec_digest(here) != spec_digest(there)  # the gates see the local paths
    assert cloud_spec_digest(here) == cloud_spec_digest(there)


def test_what_the_job_sees_changes_it(project: Path) -> None:
    spec = project / "spec.yaml"
    (project / "code" / "other.py").write_text("print('another boot file')\n")
    digest = cloud_spec_digest(load_spec(spec))
    for change in ("hyperparameters.lr=0.5", "resources.nodes=2", "code.boot_file=other.py"):
        assert cloud_spec_digest(load_spec(spec, overrides=[change])) != digest, change
