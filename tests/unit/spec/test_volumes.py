"""``volumes:``: SFS Turbo shares, checked where they are written, compiled to the REST body's
``spec.volumes``, refused by the Estimator path, counted in the digest only when set."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.compile.rest import to_rest_body
from majob.compile.sdk import VOLUMES_NOT_IN_SDK, to_estimator
from majob.compile.sdk_body import estimator_from_body
from majob.spec.digest import spec_digest
from majob.spec.load import load_spec
from tests.unit.spec.conftest import GOOD, spec_problems

POOL = GOOD.replace(
    "  flavor: modelarts.vm.cpu.8u\n", "  flavor: modelarts.pool.visual.xlarge\n  pool: pool-1\n"
)
SHARE = """\
volumes:
  - nfs: 192.168.0.169:/datasets
    mount: /mnt/sfs_turbo
    local: share
"""


def _write(project: Path, text: str) -> Path:
    (project / "share").mkdir(exist_ok=True)
    path = project / "volumes.yaml"
    path.write_text(text)
    return path


def test_a_volume_compiles_to_the_rest_body_read_only_by_default(project: Path) -> None:
    spec = load_spec(_write(project, POOL + SHARE))
    assert spec.volumes[0].local == str((project / "share").resolve())
    body = to_rest_body(spec, "debug")
    assert body["spec"]["volumes"] == [
        {
            "nfs": {
                "nfs_server_path": "192.168.0.169:/datasets",
                "local_path": "/mnt/sfs_turbo",
                "read_only": True,
            }
        }
    ]


def test_the_estimator_path_says_it_cannot_mount_a_volume(project: Path) -> None:
    spec = load_spec(_write(project, POOL + SHARE))
    assert VOLUMES_NOT_IN_SDK in to_estimator(spec).notes
    assert VOLUMES_NOT_IN_SDK in estimator_from_body(to_rest_body(spec)).notes
    assert "REST backend" in VOLUMES_NOT_IN_SDK


def test_volumes_count_in_the_digest_only_when_set(project: Path) -> None:
    plain = load_spec(_write(project, POOL))
    with_share = load_spec(_write(project, POOL + SHARE))
    assert "volumes" not in to_rest_body(plain)["spec"]
    assert spec_digest(plain) != spec_digest(with_share)
    assert spec_digest(plain) == spec_digest(load_spec(_write(project, POOL + "volumes: []\n")))


@pytest.mark.parametrize(
    ("volume", "expected"),
    [
        (
            "  - {nfs: 192.168.0.169, mount: /mnt/a}\n",
            "volumes[0].nfs: '192.168.0.169' has no path part: write SERVER:/PATH",
        ),
        (
            "  - {nfs: '192.168.0.169:', mount: /mnt/a}\n",
            "has no path part",
        ),
        ("  - {nfs: 'host:data', mount: /mnt/a}\n", "is not SERVER:/PATH"),
        ("  - {nfs: '10.0.0.1:/', mount: mnt/a}\n", "mount point 'mnt/a' is relative"),
        (
            "  - {nfs: '10.0.0.1:/', mount: /home/ma-user/modelarts/inputs}\n",
            "overlaps /home/ma-user/modelarts, which ModelArts uses",
        ),
        ("  - {nfs: '10.0.0.1:/', mount: /cache/data}\n", "overlaps /cache"),
        (
            "  - {nfs: '10.0.0.1:/', mount: /mnt/a, locl: x}\n",
            "unknown key 'locl'; did you mean 'local'?",
        ),
    ],
)
def test_a_bad_volume_is_reported_at_its_field(project: Path, volume: str, expected: str) -> None:
    problems = spec_problems(_write(project, POOL + "volumes:\n" + volume))
    assert len(problems) == 1 and expected in problems[0]
    assert problems[0].startswith(f"{POOL.count(chr(10)) + 2}:")  # the volume's own line


def test_two_volumes_on_one_mount_point_and_no_pool_are_each_reported(project: Path) -> None:
    text = GOOD + SHARE + "  - {nfs: '10.0.0.2:/', mount: /mnt/sfs_turbo/b}\n"
    problems = spec_problems(_write(project, text))
    assert any(
        p.endswith(
            "volumes: SFS Turbo volumes mount only on a dedicated resource pool (a public pool "
            "cannot reach the share's VPC): set resources.pool to the pool's id, or read the data "
            "from OBS as an input"
        )
        for p in problems
    )
    assert any("volumes[1].mount: /mnt/sfs_turbo/b overlaps the mount point" in p for p in problems)


def test_a_missing_stand_in_is_reported_at_its_line(project: Path) -> None:
    path = _write(project, POOL + SHARE.replace("local: share", "local: nowhere"))
    (problem,) = spec_problems(path)
    assert "volumes[0].local: local stand-in" in problem and "does not exist" in problem
