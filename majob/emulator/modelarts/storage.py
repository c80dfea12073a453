"""The executor's door to OBS: the fake OBS's state model, read and written directly.

In the daemon and in ``emulated_cloud()`` both fakes share a process, so a job's code, inputs,
outputs and exported logs move between the container root and the fake OBS without HTTP (what
ModelArts does inside its own network). ``JobStorage`` is the narrow protocol the executor needs;
``FakeObsStorage`` implements it over ``ObsBackend``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Protocol

from majob.emulator.modelarts.agency import JobAgency
from majob.emulator.obs.models import ObsBackend, ObsServiceError
from majob.storage.download import safe_relative_path
from majob.storage.uri import ObsUri

_PAGE = 1000


class JobStorage(Protocol):
    def bucket_exists(self, bucket: str) -> bool: ...

    def exists(self, uri: ObsUri) -> bool:
        """An object at ``uri``, or for a dir any object under it."""
        ...

    def download(self, uri: ObsUri, target: Path) -> int:
        """A dir's objects into ``target`` (tree kept) or one object into ``target/<name>``;
        returns how many files."""
        ...

    def upload_tree(self, source: Path, uri: ObsUri) -> int:
        """Every file under ``source`` to ``uri`` (a dir); returns how many files. The job may
        write there meanwhile (a periodic upload runs beside it): a file that is gone by the
        time it is read (a temporary file renamed or removed) is skipped, as a sync tool
        would, not an error."""
        ...

    def upload_file(self, source: Path, uri: ObsUri, content_type: str | None = None) -> None: ...

    def job_credentials(self, job_id: str) -> dict[str, str]:
        """The container variables that let the job's own code reach OBS (``agency.py``)."""
        ...

    def revoke_credentials(self, job_id: str) -> None: ...


class FakeObsStorage:
    """``JobStorage`` over the fake OBS's backend; ``agency`` mints the jobs' temporary
    credentials (None: the jobs' code gets none)."""

    def __init__(self, backend: ObsBackend, agency: JobAgency | None = None) -> None:
        self.backend = backend
        self.agency = agency

    def job_credentials(self, job_id: str) -> dict[str, str]:
        return self.agency.grant(job_id) if self.agency is not None else {}

    def revoke_credentials(self, job_id: str) -> None:
        if self.agency is not None:
            self.agency.revoke(job_id)

    def _keys(self, bucket: str, prefix: str) -> list[str]:
        keys: list[str] = []
        marker = ""
        while True:
            listing = self.backend.list_objects(
                bucket, prefix=prefix, marker=marker, max_keys=_PAGE
            )
            keys += [o.key for o in listing.objects]
            if not listing.is_truncated or listing.next_marker is None:
                return keys
            marker = listing.next_marker

    def bucket_exists(self, bucket: str) -> bool:
        try:
            self.backend.bucket(bucket)
        except ObsServiceError:
            return False
        return True

    def exists(self, uri: ObsUri) -> bool:
        try:
            if uri.is_dir:
                listing = self.backend.list_objects(uri.bucket, prefix=uri.key, max_keys=1)
                return bool(listing.objects)
            self.backend.get_object(uri.bucket, uri.key)
        except ObsServiceError:
            return False
        return True

    def download(self, uri: ObsUri, target: Path) -> int:
        target.mkdir(parents=True, exist_ok=True)
        if not uri.is_dir:
            self._get(uri.bucket, uri.key, target / uri.name)
            return 1
        # Anyone who can write to the bucket chooses the keys: every one is checked before the
        # first file is written, so ``code/../../x`` fails the job and writes nothing at all.
        files = [
            (key, safe_relative_path(key, uri.key, bucket=uri.bucket))
            for key in self._keys(uri.bucket, uri.key)
            if key != uri.key and not key.endswith("/")  # the prefix's own and folder markers
        ]
        for key, rel in files:
            self._get(uri.bucket, key, target / rel)
        return len(files)

    def _get(self, bucket: str, key: str, path: Path) -> None:
        obj = self.backend.get_object(bucket, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with obj.blob.open() as source, path.open("wb") as sink:
            shutil.copyfileobj(source, sink, 1 << 20)

    def upload_tree(self, source: Path, uri: ObsUri) -> int:
        count = 0
        for path in _files_under(source):
            try:
                self.upload_file(path, uri.join(path.relative_to(source).as_posix()))
            except FileNotFoundError:  # removed or renamed since the listing
                continue
            count += 1
        return count

    def upload_file(self, source: Path, uri: ObsUri, content_type: str | None = None) -> None:
        writer = self.backend.new_writer()
        try:
            with source.open("rb") as handle:
                while chunk := handle.read(1 << 20):
                    writer.write(chunk)
        except BaseException:
            writer.abandon()
            raise
        self.backend.put_object(uri.bucket, uri.key, writer.finish(), content_type=content_type)


def _files_under(source: Path) -> list[Path]:
    """The files under ``source``, sorted; a folder removed while it is walked is left out
    (``os.walk`` ignores what it cannot list)."""
    return sorted(
        Path(folder, name)
        for folder, _, names in os.walk(source)
        for name in names
        if Path(folder, name).is_file()
    )


class NoStorage:
    """``JobStorage`` when the emulator has no fake OBS: nothing can be downloaded, so a job
    fails with that reason."""

    def bucket_exists(self, bucket: str) -> bool:
        return False

    def job_credentials(self, job_id: str) -> dict[str, str]:
        return {}

    def revoke_credentials(self, job_id: str) -> None:
        return None

    def exists(self, uri: ObsUri) -> bool:
        return False

    def download(self, uri: ObsUri, target: Path) -> int:
        raise RuntimeError("the emulator has no OBS to download from")

    def upload_tree(self, source: Path, uri: ObsUri) -> int:
        raise RuntimeError("the emulator has no OBS to upload to")

    def upload_file(self, source: Path, uri: ObsUri, content_type: str | None = None) -> None:
        raise RuntimeError("the emulator has no OBS to upload to")
