"""The fake OBS backend's rules, without HTTP."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from majob.emulator.obs.models import (
    INLINE_LIMIT,
    MAX_PARTS,
    MIN_PART_SIZE,
    Blob,
    ObsBackend,
    ObsServiceError,
)
from majob.emulator.obs.wire import continuation_token, parse_continuation_token


def blob(data: bytes) -> Blob:
    return Blob(len(data), hashlib.md5(data).digest(), data=data)


@pytest.fixture(params=["memory", "disk"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ObsBackend]:
    made = ObsBackend(tmp_path / "data" if request.param == "disk" else None)
    made.create_bucket("bkt")
    yield made
    made.close()


def write(backend: ObsBackend, key: str, data: bytes = b"x") -> None:
    writer = backend.new_writer()
    writer.write(data)
    backend.put_object("bkt", key, writer.finish())


def read(backend: ObsBackend, key: str) -> bytes:
    obj = backend.get_object("bkt", key)
    return b"".join(obj.blob.read_range(0, obj.size))


def code_of(call: object) -> str:
    assert callable(call)
    with pytest.raises(ObsServiceError) as caught:
        call()
    return caught.value.code


def test_bucket_rules(backend: ObsBackend) -> None:
    assert code_of(lambda: backend.create_bucket("Bad_Name")) == "InvalidBucketName"
    assert code_of(lambda: backend.create_bucket("bkt")) == "BucketAlreadyOwnedByYou"
    assert code_of(lambda: backend.bucket("nope")) == "NoSuchBucket"
    write(backend, "k")
    assert code_of(lambda: backend.delete_bucket("bkt")) == "BucketNotEmpty"
    backend.delete_object("bkt", "k")
    backend.delete_bucket("bkt")
    assert backend.list_buckets() == []


def test_put_get_overwrite_delete(backend: ObsBackend) -> None:
    write(backend, "a/b", b"one")
    write(backend, "a/b", b"two!")
    obj = backend.get_object("bkt", "a/b")
    assert read(backend, "a/b") == b"two!"
    assert obj.etag == hashlib.md5(b"two!").hexdigest()
    assert backend.delete_object("bkt", "a/b") is True
    assert backend.delete_object("bkt", "a/b") is False
    assert code_of(lambda: backend.get_object("bkt", "a/b")) == "NoSuchKey"
    assert code_of(lambda: backend.put_object("bkt", "", blob(b""))) == "InvalidArgument"
    assert code_of(lambda: backend.put_object("bkt", "é" * 513, blob(b""))) == "KeyTooLongError"


def test_listing_with_prefix_delimiter_marker_and_pages(backend: ObsBackend) -> None:
    for key in ["a/1", "a/2", "a/sub/3", "a/sub/4", "a/zz/5", "b/6", "a0"]:
        write(backend, key)

    flat = backend.list_objects("bkt", prefix="a/")
    assert [o.key for o in flat.objects] == ["a/1", "a/2", "a/sub/3", "a/sub/4", "a/zz/5"]
    assert not flat.is_truncated and flat.next_marker is None

    rolled = backend.list_objects("bkt", prefix="a/", delimiter="/")
    assert [o.key for o in rolled.objects] == ["a/1", "a/2"]
    assert rolled.common_prefixes == ["a/sub/", "a/zz/"]

    first = backend.list_objects("bkt", prefix="a/", delimiter="/", max_keys=3)
    assert ([o.key for o in first.objects], first.common_prefixes) == (["a/1", "a/2"], ["a/sub/"])
    assert first.is_truncated and first.next_marker == "a/sub/"
    rest = backend.list_objects("bkt", prefix="a/", delimiter="/", marker=first.next_marker)
    assert (rest.objects, rest.common_prefixes) == ([], ["a/zz/"])

    assert [o.key for o in backend.list_objects("bkt", marker="a/zz/5").objects] == ["a0", "b/6"]
    assert code_of(lambda: backend.list_objects("bkt", max_keys=-1)) == "InvalidArgument"


def test_multipart_rules_and_etag(backend: ObsBackend) -> None:
    assert MIN_PART_SIZE == 100 * 1024  # OBS's smallest part but the last
    part1, part2 = b"a" * 102_400, b"b" * 10
    upload = backend.create_upload("bkt", "mp", metadata={"m": "1"})
    p1 = backend.put_part("bkt", "mp", upload.upload_id, 1, blob(part1))
    p2 = backend.put_part("bkt", "mp", upload.upload_id, 2, blob(part2))
    assert [p.number for p in backend.list_parts("bkt", "mp", upload.upload_id)] == [1, 2]

    assert (
        code_of(lambda: backend.put_part("bkt", "mp", upload.upload_id, 0, blob(b"")))
        == "InvalidArgument"
    )
    too_many = MAX_PARTS + 1
    assert (
        code_of(lambda: backend.put_part("bkt", "mp", upload.upload_id, too_many, blob(b"")))
        == "InvalidArgument"
    )
    assert (
        code_of(lambda: backend.put_part("bkt", "other", upload.upload_id, 1, blob(b"")))
        == "NoSuchUpload"
    )
    complete = backend.complete_upload
    assert code_of(lambda: complete("bkt", "mp", upload.upload_id, [])) == "MalformedXML"
    assert (
        code_of(lambda: complete("bkt", "mp", upload.upload_id, [(2, p2.etag), (1, p1.etag)]))
        == "InvalidPartOrder"
    )
    assert (
        code_of(lambda: complete("bkt", "mp", upload.upload_id, [(1, p1.etag), (3, p2.etag)]))
        == "InvalidPart"
    )
    assert code_of(lambda: complete("bkt", "mp", upload.upload_id, [(1, p2.etag)])) == "InvalidPart"
    assert (
        code_of(lambda: complete("bkt", "mp", upload.upload_id, [(2, p2.etag), (3, p2.etag)]))
        == "InvalidPart"
    )

    obj = complete("bkt", "mp", upload.upload_id, [(1, f'"{p1.etag}"'), (2, p2.etag)])

    assert read(backend, "mp") == part1 + part2
    # md5(md5(part1) || md5(part2))-2, computed apart from majob with coreutils (md5sum, xxd).
    assert obj.etag == "986a36156eb9beefeea12b0e118a4b2e-2"
    assert obj.metadata == {"m": "1"}
    assert backend.list_uploads("bkt") == []
    assert code_of(lambda: backend.abort_upload("bkt", "mp", upload.upload_id)) == "NoSuchUpload"


def test_small_part_before_the_last_is_too_small(backend: ObsBackend) -> None:
    upload = backend.create_upload("bkt", "mp")
    p1 = backend.put_part("bkt", "mp", upload.upload_id, 1, blob(b"a" * (MIN_PART_SIZE - 1)))
    p2 = backend.put_part("bkt", "mp", upload.upload_id, 2, blob(b"b"))
    with pytest.raises(ObsServiceError) as caught:
        backend.complete_upload("bkt", "mp", upload.upload_id, [(1, p1.etag), (2, p2.etag)])
    assert caught.value.code == "EntityTooSmall" and caught.value.status == 400
    # A single small part is a whole (last) part: allowed.
    assert (
        backend.complete_upload("bkt", "mp", upload.upload_id, [(1, p1.etag)]).size
        == MIN_PART_SIZE - 1
    )


def test_list_uploads_by_prefix_and_abort(backend: ObsBackend) -> None:
    kept = backend.create_upload("bkt", "x/1")
    dropped = backend.create_upload("bkt", "y/1")
    assert [u.upload_id for u in backend.list_uploads("bkt", "x/")] == [kept.upload_id]
    backend.abort_upload("bkt", "y/1", dropped.upload_id)
    assert [u.key for u in backend.list_uploads("bkt")] == ["x/1"]


def test_disk_state_survives_a_restart(tmp_path: Path) -> None:
    first = ObsBackend(tmp_path)
    first.create_bucket("bkt")
    write(first, "kept", b"data")
    first.put_object("bkt", "meta", blob(b"m"), content_type="text/plain", metadata={"a": "1"})
    upload = first.create_upload("bkt", "half")
    first.put_part("bkt", "half", upload.upload_id, 1, blob(b"p"))
    write(first, "gone")
    first.delete_object("bkt", "gone")
    write(first, "large", b"L" * (INLINE_LIMIT + 1))  # a file of its own
    first.close()
    (tmp_path / "blobs" / "orphan").write_bytes(b"a body whose request never finished")
    with (tmp_path / "journal.jsonl").open("a") as journal:
        journal.write('{"op":"put","bucket":"bkt","key":"cut-sh')  # killed mid-append

    second = ObsBackend(tmp_path)

    assert read(second, "kept") == b"data"
    meta = second.get_object("bkt", "meta")
    assert (meta.content_type, meta.metadata) == ("text/plain", {"a": "1"})
    assert [o.key for o in second.list_objects("bkt").objects] == ["kept", "large", "meta"]
    assert read(second, "large") == b"L" * (INLINE_LIMIT + 1)
    assert [p.number for p in second.list_parts("bkt", "half", upload.upload_id)] == [1]
    assert len(list((tmp_path / "blobs").iterdir())) == 1  # the orphan is gone
    journal_lines = (tmp_path / "journal.jsonl").read_text().splitlines()
    assert len(journal_lines) == 6  # compacted: the bucket, 3 objects, 1 upload and its part
    second.close()


def test_continuation_tokens_are_opaque_and_checked() -> None:
    token = continuation_token("a/ü b")
    assert "a/" not in token
    assert parse_continuation_token(token) == "a/ü b"
    with pytest.raises(ObsServiceError, match="continuation token"):
        parse_continuation_token("!!!")


def _big_part(backend: ObsBackend, upload_id: str, number: int, data: bytes) -> str:
    writer = backend.new_writer()
    writer.write(data)
    return backend.put_part("bkt", "mp", upload_id, number, writer.finish()).etag


def test_completing_joins_the_parts_without_copying_them(backend: ObsBackend) -> None:
    parts = [bytes([65 + n]) * (MIN_PART_SIZE + n) for n in range(3)]
    upload = backend.create_upload("bkt", "mp")
    etags = [_big_part(backend, upload.upload_id, n + 1, data) for n, data in enumerate(parts)]
    stored = [p.blob for p in backend.list_parts("bkt", "mp", upload.upload_id)]
    obj = backend.complete_upload("bkt", "mp", upload.upload_id, list(enumerate(etags, 1)))

    assert obj.blob.pieces == tuple(stored)  # the part blobs themselves, in order
    whole = b"".join(parts)
    assert read(backend, "mp") == whole and obj.size == len(whole)
    start = MIN_PART_SIZE - 3  # a range across the first two parts
    assert b"".join(obj.blob.read_range(start, 10)) == whole[start : start + 10]
    assert b"".join(obj.blob.read_range(len(whole) - 4, 4)) == whole[-4:]
    with obj.blob.open() as stream:
        assert stream.read() == whole


def test_a_joined_object_survives_a_restart_and_its_deletion_frees_its_files(
    tmp_path: Path,
) -> None:
    first = ObsBackend(tmp_path)
    first.create_bucket("bkt")
    parts = [b"p" * INLINE_LIMIT * 2, b"q" * 7]
    upload = first.create_upload("bkt", "mp")
    etags = [_big_part(first, upload.upload_id, n + 1, data) for n, data in enumerate(parts)]
    first.complete_upload("bkt", "mp", upload.upload_id, list(enumerate(etags, 1)))
    first.close()

    second = ObsBackend(tmp_path)
    assert read(second, "mp") == b"".join(parts)
    assert len(list((tmp_path / "blobs").iterdir())) == 1  # the big part; the small is inline
    second.delete_object("bkt", "mp")
    assert list((tmp_path / "blobs").iterdir()) == []
    second.close()


def test_a_pinned_blob_file_outlives_its_discard(tmp_path: Path) -> None:
    from majob.emulator.obs.blobs import BlobRange, BlobWriter

    writer = BlobWriter(tmp_path / "blob")
    writer.write(b"x" * 100_000)
    blob = writer.finish()
    reading = BlobRange(blob, 10, 5)
    blob.discard()
    assert (tmp_path / "blob").exists()  # a reader holds it
    assert b"".join(reading) == b"xxxxx"
    assert not (tmp_path / "blob").exists()  # the last reader let go


def test_response_xml_escapes_markup_and_control_characters() -> None:
    from majob.emulator.obs.wire import Xml, parse_xml

    body = Xml("R", None).leaf("Key", "a<&>\x00b").open("In").text("c\rd").close("In").bytes()
    assert body.endswith(b"<R><Key>a&lt;&amp;&gt;&#0;b</Key><In>c&#13;d</In></R>")
    assert parse_xml(b"<R><K>v</K></R>").find("K") is not None
