"""The local stage mounts each volume's stand-in where the container has the mount point: in the
hyperparameters and env values that name it, on every node; a volume without a stand-in stops
the run before any node starts; a write to a read-only volume's stand-in is a guard finding."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from majob.errors import RunnerError
from majob.runner.local import run_local
from majob.spec.models import JobSpec

MakeProject = Callable[..., JobSpec]

READER = """
import argparse, os
p = argparse.ArgumentParser(); p.add_argument("--data_dir"); p.add_argument("--write")
a, _ = p.parse_known_args()
print("node", os.environ["VC_TASK_INDEX"], "reads", open(os.path.join(a.data_dir, "a.txt")).read())
print("env", os.environ["SHARE"])
if a.write == "yes" and os.environ["VC_TASK_INDEX"] == "0":
    open(os.path.join(a.data_dir, "new.txt"), "w").write("x")
"""


def _volumes(share: Path | None, *, read_only: bool = True) -> dict[str, object]:
    volume: dict[str, object] = {"nfs": "10.0.0.1:/", "mount": "/mnt/sfs", "read_only": read_only}
    if share is not None:
        volume["local"] = str(share)
    return {
        "volumes": [volume],
        "resources": {"flavor": "modelarts.pool.visual.xlarge", "pool": "pool-1"},
        "env": {"SHARE": "/mnt/sfs"},
    }


def _share(tmp_path: Path) -> Path:
    share = tmp_path / "share"
    (share / "data").mkdir(parents=True)
    (share / "data" / "a.txt").write_text("sample")
    return share


def test_every_node_reads_the_stand_in_at_the_mount_point(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    share = _share(tmp_path)
    spec = make_project(READER, hyperparameters={"data_dir": "/mnt/sfs/data"}, **_volumes(share))
    lines: list[str] = []
    result = run_local(spec, nodes=2, runs_dir=runs_dir, on_line=lines.append)
    assert result.ok
    text = "\n".join(lines)
    assert "node 0 reads sample" in text and "node 1 reads sample" in text
    assert f"env {share}" in text


def test_a_write_to_a_read_only_volume_is_a_finding_and_to_a_writable_one_is_not(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    share = _share(tmp_path)
    hyper = {"data_dir": "/mnt/sfs/data", "write": "yes"}
    read_only = run_local(
        make_project(READER, hyperparameters=hyper, **_volumes(share)), runs_dir=runs_dir
    )
    assert any(f.kind == "write" and "new.txt" in f.path for f in read_only.findings)
    writable = run_local(
        make_project(READER, hyperparameters=hyper, **_volumes(share, read_only=False)),
        runs_dir=runs_dir,
    )
    assert not [f for f in writable.findings if "new.txt" in f.path]


def test_a_volume_without_a_stand_in_stops_the_run_before_any_node(
    make_project: MakeProject, runs_dir: Path
) -> None:
    spec = make_project(READER, hyperparameters={"data_dir": "/mnt/sfs/data"}, **_volumes(None))
    with pytest.raises(RunnerError) as caught:
        run_local(spec, runs_dir=runs_dir)
    assert "has no local stand-in for the local stage" in str(caught.value)
    assert "volumes[0]" in (caught.value.hint or "")
