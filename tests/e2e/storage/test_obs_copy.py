"""``copy_folder``: a folder copied inside OBS by esdk-obs-python's CopyObject and UploadPartCopy,
against the fake OBS, whole or not at all: keys that need quoting, objects over the single-copy
limit (in parts, metadata kept), folder markers left out, and a failure or a Ctrl-C part-way
that leaves the target as it was."""

from __future__ import annotations

import os

import pytest

from majob.emulator.obs import FakeObsServer
from majob.errors import StorageError, UserInputError
from majob.storage.base import ObjectInfo
from majob.storage.copy import copy_folder
from majob.storage.obs import ObsObjectStore
from majob.storage.uri import ObsUri
from majob.testing import FAKE_BUCKET

PART = 100 * 1024  # the smallest part OBS accepts
SOURCE = ObsUri(FAKE_BUCKET, "out/debug/ckpt/")
TARGET = ObsUri(FAKE_BUCKET, "out/formal/ckpt/")
KEYS = ["epoch-0000.pt", "sub dir/100% done+1.pt", "état/ü?.pt"]


def _keys(store: ObsObjectStore, folder: ObsUri) -> list[str]:
    return sorted(info.key[len(folder.key) :] for info in store.list_all(folder.bucket, folder.key))


def test_every_object_is_copied_under_the_target_and_markers_are_not(
    obs_store: ObsObjectStore,
) -> None:
    for index, name in enumerate(KEYS):
        obs_store.put_bytes(FAKE_BUCKET, SOURCE.key + name, f"ckpt {index}".encode())
    obs_store.put_bytes(FAKE_BUCKET, SOURCE.key + "empty-folder/", b"")  # a console folder
    done = copy_folder(obs_store, SOURCE, TARGET)
    assert sorted(done.keys) == sorted(TARGET.key + name for name in KEYS)
    assert _keys(obs_store, TARGET) == sorted(KEYS)
    for index, name in enumerate(KEYS):
        assert obs_store.get_bytes(FAKE_BUCKET, TARGET.key + name) == f"ckpt {index}".encode()
    assert _keys(obs_store, SOURCE) == sorted([*KEYS, "empty-folder/"])  # the source stays


def test_an_object_over_the_copy_limit_is_copied_in_parts_with_its_metadata(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer
) -> None:
    data = os.urandom(2 * PART + 1234)
    obs_store.put_bytes(
        FAKE_BUCKET, SOURCE.key + "état/big 100%.pt", data, metadata={"step": "700"}
    )
    copy_folder(obs_store, SOURCE, TARGET, limit=PART, part_size=PART)
    assert obs_store.get_bytes(FAKE_BUCKET, TARGET.key + "état/big 100%.pt") == data
    head = obs_store.head(FAKE_BUCKET, TARGET.key + "état/big 100%.pt")
    assert head is not None and head.metadata.get("step") == "700"
    parts = [e for e in fake_obs_server.log.entries() if "partNumber=" in e.query]
    assert len(parts) == 3  # three ranges copied, not the bytes sent from here


def test_a_failure_part_way_deletes_what_was_copied(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer
) -> None:
    for name in ("a.pt", "b.pt", "c.pt"):
        obs_store.put_bytes(FAKE_BUCKET, SOURCE.key + name, b"x")
    fake_obs_server.add_fault(status=403, code="AccessDenied", method="PUT", path="formal/ckpt/c")
    with pytest.raises(StorageError, match="AccessDenied"):
        copy_folder(obs_store, SOURCE, TARGET)
    assert _keys(obs_store, TARGET) == []  # a.pt and b.pt were copied, then deleted


def test_a_ctrl_c_part_way_through_a_multipart_copy_leaves_nothing(
    obs_store: ObsObjectStore,
) -> None:
    obs_store.put_bytes(FAKE_BUCKET, SOURCE.key + "a.pt", b"small")
    obs_store.put_bytes(FAKE_BUCKET, SOURCE.key + "b.pt", os.urandom(2 * PART))
    seen: list[str] = []

    def interrupt_at_b(info: ObjectInfo) -> None:
        seen.append(info.key)
        if info.key.endswith("b.pt"):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        copy_folder(obs_store, SOURCE, TARGET, limit=PART, part_size=PART, on_object=interrupt_at_b)
    assert len(seen) == 2
    assert _keys(obs_store, TARGET) == []
    assert obs_store.list_multipart_uploads(FAKE_BUCKET, TARGET.key) == []


def test_a_folder_is_not_copied_into_itself_or_its_parent(obs_store: ObsObjectStore) -> None:
    for inner, outer in ((TARGET, ObsUri(FAKE_BUCKET, "out/formal/")), (SOURCE, SOURCE)):
        with pytest.raises(UserInputError, match="one folder holds the other"):
            copy_folder(obs_store, outer, inner)
