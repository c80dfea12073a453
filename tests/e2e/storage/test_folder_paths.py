"""Every path that reads a remote tree reads the folder ``x/``, never the keys that merely start
with ``x``: the listing helper, downloads, sync, the judge's output listing, precision's
``obs://`` fetch and pre-flight's input check.

The real client (esdk-obs-python) against the fake OBS; the judge and precision reach it
through ``--profile emulator`` (the emulated cloud of ``tests/e2e/conftest.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from majob.pipeline.judge import cloud_outputs
from majob.precision.sources import resolve
from majob.service.preflight import Findings, check_inputs
from majob.spec.models import JobSpec
from majob.spec.profiles import Profile
from majob.storage.download import download_tree
from majob.storage.listing import LIST_PAGE, iter_folder, list_folder, list_named
from majob.storage.obs import ObsObjectStore
from majob.storage.sync import sync_dir
from majob.storage.uri import ObsUri
from majob.sweep.space import trial_spec
from majob.testing import FAKE_BUCKET

DEMO = "majob-demo"  # the emulated cloud's bucket
NAMES = ["out", "with space", "ünï", "50%", "a%2Fb"]


def _put(store: ObsObjectStore, bucket: str, keys: list[str]) -> None:
    for key in keys:
        store.put_bytes(bucket, key, b"" if key.endswith("/") else key.encode())


def _alike(name: str) -> list[str]:
    return [f"{name}x/sibling", f"{name}.txt", f"{name} y/z", f"{name}-old/model.pth"]


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def _spec(tmp_path: Path, **sections: Any) -> JobSpec:
    return JobSpec.model_validate(
        {
            "name": "tiny",
            "code": {"dir": str(tmp_path), "boot_file": "train.py"},
            "image": {"engine": "PyTorch",
                      "version": "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64"},
            "resources": {"flavor": "modelarts.vm.cpu.8u", "nodes": 1},
            **sections,
        }
    )  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_list_named_is_the_object_and_the_folder(name: str, obs_store: ObsObjectStore) -> None:
    inside = [f"{name}/", f"{name}/a.txt", f"{name}/sub/b.txt"]
    _put(obs_store, FAKE_BUCKET, [name, *inside, *_alike(name)])
    named = list_named(obs_store, ObsUri(FAKE_BUCKET, name))
    assert named.exact is not None and named.exact.key == name
    assert [o.key for o in named.below] == inside
    assert [o.key for o in named.objects] == [name, *inside]
    slash = list_named(obs_store, ObsUri(FAKE_BUCKET, name + "/"))
    assert slash.exact is None and [o.key for o in slash.objects] == inside
    assert [o.key for o in list_folder(obs_store, ObsUri(FAKE_BUCKET, name))] == inside


def test_a_folder_is_read_page_by_page(obs_store: ObsObjectStore) -> None:
    keys = [f"big/{i:05d}" for i in range(LIST_PAGE + 5)]
    _put(obs_store, FAKE_BUCKET, [*keys, "bigger/x", "big"])
    assert [o.key for o in iter_folder(obs_store, ObsUri(FAKE_BUCKET, "big"))] == keys


def test_the_bucket_root_is_every_object(obs_store: ObsObjectStore) -> None:
    _put(obs_store, FAKE_BUCKET, ["a", "a/b", "c/"])
    root = list_named(obs_store, ObsUri(FAKE_BUCKET, ""))
    assert root.exact is None and [o.key for o in root.objects] == ["a", "a/b", "c/"]


@pytest.mark.parametrize("name", NAMES)
def test_download_tree_downloads_the_folder_only(
    name: str, obs_store: ObsObjectStore, tmp_path: Path
) -> None:
    _put(obs_store, FAKE_BUCKET, [name, f"{name}/a.txt", f"{name}/sub/b.txt", *_alike(name)])
    result = download_tree(obs_store, ObsUri(FAKE_BUCKET, name), tmp_path / "got")
    assert result.downloaded == 2 and _files(tmp_path / "got") == ["a.txt", "sub/b.txt"]


@pytest.mark.parametrize("name", NAMES)
def test_sync_delete_deletes_in_the_folder_only(
    name: str, obs_store: ObsObjectStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(tmp_path / "cache"))
    _put(obs_store, FAKE_BUCKET, [name, f"{name}/stale.txt", *_alike(name)])
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "new.txt").write_text("n")
    plan, result = sync_dir(obs_store, tmp_path / "src", ObsUri(FAKE_BUCKET, name), delete=True)
    assert [o.key for o in plan.extraneous] == [f"{name}/stale.txt"]
    assert result is not None and result.deleted == 1
    left = sorted(o.key for o in obs_store.list_all(FAKE_BUCKET, ""))
    assert left == sorted([name, f"{name}/new.txt", *_alike(name)])


def test_cloud_outputs_are_the_output_folder_only(
    tmp_path: Path, profile: Profile, store: ObsObjectStore
) -> None:
    spec = _spec(tmp_path, outputs=[{"name": "train_url", "obs": f"obs://{DEMO}/tiny/out/"}])
    _put(store, DEMO, _alike("tiny/out"))
    files, missing = cloud_outputs(spec, profile)
    assert files == [] and missing == [f"obs://{DEMO}/tiny/out/"]
    _put(store, DEMO, ["tiny/out/", "tiny/out/model.pth"])
    files, missing = cloud_outputs(spec, profile)
    assert missing == [] and [(f.path, f.uri) for f in files] == [
        ("model.pth", f"obs://{DEMO}/tiny/out/model.pth")
    ]


def test_a_sweep_trial_is_judged_on_its_own_folder(
    tmp_path: Path, profile: Profile, store: ObsObjectStore
) -> None:
    # Trial 1's folder is out/tiny-t1/; trial 10's out/tiny-t10/ starts with the same letters.
    spec = _spec(tmp_path, outputs=[{"name": "train_url", "obs": f"obs://{DEMO}/out/"}])
    first, tenth = (trial_spec(spec, "debug", number, {}) for number in (0, 9))
    assert [o.obs.key for o in (*first.outputs, *tenth.outputs)] == [
        "out/tiny-t1/",
        "out/tiny-t10/",
    ]
    _put(store, DEMO, ["out/tiny-t10/model.pth", "out/tiny-t1.log"])
    assert cloud_outputs(first, profile) == ([], [f"obs://{DEMO}/out/tiny-t1/"])
    files, missing = cloud_outputs(tenth, profile)
    assert missing == [] and [f.path for f in files] == ["model.pth"]


def test_a_precision_fetch_downloads_the_folder_only(
    tmp_path: Path, profile: Profile, store: ObsObjectStore
) -> None:
    _put(store, DEMO, ["job/out/loss-rank0.jsonl", "job/outx/step0/0/dump.json", "job/out.pth"])
    dump = resolve(f"obs://{DEMO}/job/out", tmp_path / "runs", tmp_path / "cache", "emulator")
    assert dump.dump_dir is not None and _files(dump.dump_dir) == ["loss-rank0.jsonl"]
    assert dump.checkpoint() is None  # job/out.pth is beside the folder, not in it


def test_preflight_finds_no_data_in_a_folder_whose_neighbours_hold_some(
    tmp_path: Path, obs_store: ObsObjectStore
) -> None:
    job = _spec(tmp_path, inputs=[{"name": "data_url", "obs": f"obs://{FAKE_BUCKET}/data/"}])
    _put(obs_store, FAKE_BUCKET, ["data", *_alike("data"), "data/"])
    findings = Findings()
    check_inputs(job, obs_store, findings, upload_inputs=False)
    assert [p.split(";")[0] for p in findings.problems] == [
        f"inputs[0] data_url: obs://{FAKE_BUCKET}/data/ holds no data"
    ]
    _put(obs_store, FAKE_BUCKET, ["data/part-0"])
    findings = Findings()
    check_inputs(job, obs_store, findings, upload_inputs=False)
    assert findings.problems == []
