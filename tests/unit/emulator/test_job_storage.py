"""The executor's door to the fake OBS: uploading a folder the job is still writing to."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from majob.emulator.modelarts.storage import FakeObsStorage
from majob.emulator.obs.blobs import Blob
from majob.emulator.obs.models import ObsBackend
from majob.storage.uri import ObsUri


@pytest.fixture
def storage() -> Iterator[FakeObsStorage]:
    backend = ObsBackend()
    backend.create_bucket("bkt")
    yield FakeObsStorage(backend)
    backend.close()


def _keys(storage: FakeObsStorage) -> list[str]:
    return [o.key for o in storage.backend.list_objects("bkt", prefix="out/").objects]


def test_a_file_gone_between_the_listing_and_its_upload_is_skipped(
    storage: FakeObsStorage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A periodic upload runs beside the job: a checkpoint's temporary file listed, then
    renamed by the job before it is read, must not fail the upload (it failed the job)."""
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "step.txt").write_text("1")
    (tmp_path / "ckpt" / "step.txt.tmp").write_text("2")
    upload_file = storage.upload_file

    def then_the_job_renames(source: Path, uri: ObsUri, content_type: str | None = None) -> None:
        if source.name == "step.txt":  # sorted first: the job renames the other meanwhile
            (tmp_path / "ckpt" / "step.txt.tmp").replace(source)
        upload_file(source, uri, content_type)

    monkeypatch.setattr(storage, "upload_file", then_the_job_renames)
    assert storage.upload_tree(tmp_path, ObsUri.parse("obs://bkt/out/")) == 1
    assert _keys(storage) == ["out/ckpt/step.txt"]


def test_every_file_of_a_tree_is_uploaded(storage: FakeObsStorage, tmp_path: Path) -> None:
    for name in ("a.txt", "sub/b.txt", "sub/deeper/c.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    assert storage.upload_tree(tmp_path, ObsUri.parse("obs://bkt/out/")) == 3
    assert _keys(storage) == ["out/a.txt", "out/sub/b.txt", "out/sub/deeper/c.txt"]


def test_a_folder_input_is_the_folder_not_the_keys_that_start_alike(
    storage: FakeObsStorage, tmp_path: Path
) -> None:
    """A job's input ``/bkt/data/`` is what is in ``data/``; ``data-old/``, ``data.csv`` and
    ``datax/`` only start with the same letters (the ModelArts API writes dirs with a '/')."""
    for key in ("data/", "data/a.txt", "data/sub/b.txt", "data", "data.csv", "datax/c", "data y/d"):
        storage.backend.put_object("bkt", key, _blob(storage, key))
    assert storage.download(ObsUri.parse("obs://bkt/data/"), tmp_path / "in") == 2
    found = sorted(p.relative_to(tmp_path / "in").as_posix() for p in (tmp_path / "in").rglob("*"))
    assert found == ["a.txt", "sub", "sub/b.txt"]
    assert storage.exists(ObsUri.parse("obs://bkt/data/"))
    assert not storage.exists(ObsUri.parse("obs://bkt/dat/"))  # dat... keys, but no dat/


def _blob(storage: FakeObsStorage, key: str) -> Blob:
    writer = storage.backend.new_writer()
    writer.write(key.encode())
    return writer.finish()
