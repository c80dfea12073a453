"""The checklist's "OBS -> SFS planned" item from the data plan (one listing of the fake OBS)
and the ledger's recorded stages: not needed, todo, planned, staged, not checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.pipeline.data_item import data_item
from majob.pipeline.data_stages import save_data_stage
from majob.pipeline.ledger import Ledger
from majob.service import dataplan
from majob.spec.load import load_spec
from majob.spec.models import JobSpec
from majob.storage.obs import ObsObjectStore

SPEC = """\
name: tiny
code: {dir: code, boot_file: train.py}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u}
inputs: [{name: data_url, obs: "obs://b-1/data/", local: data}]
"""
VOLUMES = """\
resources: {pool: pool-1, nodes: 2}
volumes: [{nfs: "10.0.0.5:/sets/digits", mount: /mnt/data}]
"""


def _spec(tmp_path: Path, volumes: bool = False) -> JobSpec:
    (tmp_path / "code").mkdir(exist_ok=True)
    (tmp_path / "code" / "train.py").write_text("print('hi')\n")
    (tmp_path / "data").mkdir(exist_ok=True)
    text = SPEC.replace("resources: {flavor: modelarts.vm.cpu.8u}\n", VOLUMES) if volumes else SPEC
    (tmp_path / "spec.yaml").write_text(text)
    return load_spec(tmp_path / "spec.yaml").at_stage("formal")


@pytest.fixture
def store(obs_store: ObsObjectStore) -> ObsObjectStore:
    obs_store.create_bucket("b-1")
    for i in range(3):
        obs_store.put_bytes("b-1", f"data/part-{i}.bin", b"z" * 2000)
    return obs_store


def test_inputs_that_fit_the_cache_need_no_sfs(tmp_path: Path, store: ObsObjectStore) -> None:
    item = data_item(_spec(tmp_path), Ledger(tmp_path / "l.db"), store)
    assert item.status == "not needed", item
    assert "downloads 6 kB (3 objects)" in item.detail and "room to spare" in item.detail


def test_inputs_too_big_for_the_cache_are_todo_with_the_stage_command(
    tmp_path: Path, store: ObsObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A /cache of 5 kB (the catalogue's is 100 GB): the 6 kB of inputs cannot fit it.
    monkeypatch.setattr(dataplan, "cache_of", lambda flavor, offered=(): (5000, "test"))
    item = data_item(_spec(tmp_path), Ledger(tmp_path / "l.db"), store)
    assert item.status == "todo" and "more than its 5 kB /cache" in item.detail
    assert item.todo.startswith("majob data stage obs://b-1/data/ sfs://SERVER/PATH")


def test_a_mounted_share_is_planned_until_majob_staged_it(
    tmp_path: Path, store: ObsObjectStore
) -> None:
    spec = _spec(tmp_path, volumes=True)
    ledger = Ledger(tmp_path / "l.db")
    planned = data_item(spec, ledger, None)
    assert planned.status == "done" and "planned, not staged by majob" in planned.detail
    assert "filled outside majob" in planned.todo
    save_data_stage(
        ledger,
        source="obs://b-1/data/",
        target="sfs://10.0.0.5/sets/digits",
        nfs="10.0.0.5:/sets/digits",
        listing_digest="ab" * 32,
        files=3,
        size=6000,
        job_id="job-1",
    )
    staged = data_item(spec, ledger, None)
    assert staged.status == "done" and not staged.todo
    assert "staged from obs://b-1/data/ (3 files, 6 kB; job job-1" in staged.detail


def test_without_obs_the_item_is_not_checked(tmp_path: Path) -> None:
    item = data_item(_spec(tmp_path), Ledger(tmp_path / "l.db"), None)
    assert item.status == "not checked" and "data_url (0 B here)" in item.detail
