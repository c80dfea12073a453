"""Persistence of the fake OBS (with ``--data DIR``).

``<dir>/journal.jsonl`` is an append-only log of changes (one JSON line each, flushed, never
fsynced); bodies up to ``INLINE_LIMIT`` are inlined in it (base64), larger ones are files in
``<dir>/blobs/``. Loading replays the log, deletes unreferenced blobs and rewrites the log as a
snapshot. One append per request keeps a persisting fake about as fast as a memory one.
"""

from __future__ import annotations

import base64
import bisect
import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from majob.emulator.obs.blobs import Blob, BlobWriter
from majob.emulator.obs.state import FakeBucket, FakeObject, FakePart, FakeUpload


class Journal:
    """The journal and blob files of one data directory."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        (data_dir / "blobs").mkdir(parents=True, exist_ok=True)
        self._file: TextIO | None = None

    def new_writer(self) -> BlobWriter:
        """Where a request body goes while it arrives: a new file once it outgrows memory."""
        return BlobWriter(self.data_dir / "blobs" / uuid.uuid4().hex)

    def append(self, record: Callable[[], dict[str, object]]) -> None:
        if self._file is not None:
            self._file.write(json.dumps(record(), separators=(",", ":")) + "\n")
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    @staticmethod
    def blob_fields(blob: Blob) -> dict[str, object]:
        fields: dict[str, object] = {"size": blob.size, "md5": blob.md5.hex()}
        if blob.pieces:
            fields["pieces"] = [Journal.blob_fields(piece) for piece in blob.pieces]
        elif blob.path is not None:
            fields["file"] = blob.path.name
        else:
            fields["data"] = base64.b64encode(blob.data or b"").decode("ascii")
        return fields

    def _blob_from(self, record: dict[str, Any]) -> Blob:
        md5 = bytes.fromhex(record["md5"])
        if "pieces" in record:
            return Blob(record["size"], md5, pieces=tuple(map(self._blob_from, record["pieces"])))
        if "file" in record:
            return Blob(record["size"], md5, path=self.data_dir / "blobs" / record["file"])
        return Blob(record["size"], md5, data=base64.b64decode(record["data"]))

    @staticmethod
    def object_record(bucket: str, obj: FakeObject) -> dict[str, object]:
        return {
            "op": "put",
            "bucket": bucket,
            "key": obj.key,
            "etag": obj.etag,
            "modified": obj.last_modified,
            "type": obj.content_type,
            "meta": obj.metadata,
            "headers": obj.headers,
            "class": obj.storage_class,
            "tags": obj.tags,
            **Journal.blob_fields(obj.blob),
        }

    @staticmethod
    def part_record(bucket: str, upload_id: str, part: FakePart) -> dict[str, object]:
        return {
            "op": "part",
            "bucket": bucket,
            "upload": upload_id,
            "number": part.number,
            "etag": part.etag,
            "modified": part.last_modified,
            **Journal.blob_fields(part.blob),
        }

    @staticmethod
    def upload_record(bucket: str, upload: FakeUpload) -> dict[str, object]:
        return {
            "op": "upload",
            "bucket": bucket,
            "upload": upload.upload_id,
            "key": upload.key,
            "initiated": upload.initiated,
            "type": upload.content_type,
            "meta": upload.metadata,
            "headers": upload.headers,
            "class": upload.storage_class,
            "tags": upload.tags,
        }

    def load(self) -> dict[str, FakeBucket]:
        """Replay the journal, compact it, and open it for appending."""
        buckets: dict[str, FakeBucket] = {}
        path = self.data_dir / "journal.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        for number, line in enumerate(lines, start=1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                if number == len(lines):
                    break  # the last append was cut short (the process was killed)
                raise
            self._replay(buckets, record)
        self._compact(buckets, path)
        self._file = path.open("a", encoding="utf-8")
        return buckets

    def _compact(self, buckets: dict[str, FakeBucket], path: Path) -> None:
        referenced: set[str] = set()
        snapshot: list[dict[str, object]] = []
        for bucket in buckets.values():
            snapshot.append(
                {
                    "op": "bucket",
                    "name": bucket.name,
                    "created": bucket.created,
                    "location": bucket.location,
                }
            )
            for obj in bucket.objects.values():
                snapshot.append(self.object_record(bucket.name, obj))
                referenced.update(path.name for path in obj.blob.files())
            for upload_id, (key, etag) in bucket.completed.items():
                completed: dict[str, object] = {"op": "end-upload", "bucket": bucket.name}
                completed |= {"upload": upload_id, "key": key, "etag": etag}
                snapshot.append(completed)
            for upload in bucket.uploads.values():
                snapshot.append(self.upload_record(bucket.name, upload))
                for part in upload.parts.values():
                    snapshot.append(self.part_record(bucket.name, upload.upload_id, part))
                    referenced.update(path.name for path in part.blob.files())
        for blob_file in (self.data_dir / "blobs").iterdir():
            if blob_file.name not in referenced:
                blob_file.unlink(missing_ok=True)
        fresh = path.with_suffix(".tmp")
        fresh.write_text(
            "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in snapshot), encoding="utf-8"
        )
        os.replace(fresh, path)

    def _replay(self, buckets: dict[str, FakeBucket], record: dict[str, Any]) -> None:
        op = record["op"]
        if op == "bucket":
            buckets[record["name"]] = FakeBucket(
                record["name"], record["created"], record["location"]
            )
            return
        if op == "unbucket":
            buckets.pop(record["name"], None)
            return
        bucket = buckets[record["bucket"]]
        if op == "put":
            if record["key"] not in bucket.objects:
                bisect.insort(bucket.sorted_keys, record["key"])
            bucket.objects[record["key"]] = FakeObject(
                record["key"],
                self._blob_from(record),
                record["etag"],
                record["modified"],
                record["type"],
                record["meta"],
                record.get("headers", {}),
                record.get("class", "STANDARD"),
                record.get("tags", {}),
            )
        elif op == "tags":
            found = bucket.objects.get(record["key"])
            if found is not None:
                found.tags = record["tags"]
        elif op == "delete":
            if bucket.objects.pop(record["key"], None) is not None:
                del bucket.sorted_keys[bisect.bisect_left(bucket.sorted_keys, record["key"])]
        elif op == "upload":
            bucket.uploads[record["upload"]] = FakeUpload(
                record["upload"],
                record["key"],
                record["initiated"],
                record["type"],
                record["meta"],
                headers=record.get("headers", {}),
                storage_class=record.get("class", "STANDARD"),
                tags=record.get("tags", {}),
            )
        elif op == "part":
            upload = bucket.uploads[record["upload"]]
            upload.parts[record["number"]] = FakePart(
                record["number"], self._blob_from(record), record["etag"], record["modified"]
            )
        elif op == "end-upload":
            bucket.uploads.pop(record["upload"], None)
            if "etag" in record:
                bucket.completed[record["upload"]] = (record["key"], record["etag"])
