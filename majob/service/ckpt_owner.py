"""Who wrote a checkpoint folder: the owner record majob keeps for each one it submits a job with.

A job whose spec has ``fault_tolerance.checkpoints`` gets that folder downloaded into its
container before it starts, and an ordinary script resumes from what it finds there. So when
majob submits a stage with a checkpoint folder it records the owner (stage, spec name and
digest, job name and id, when), and the pre-flight of the next submit reads it
(``service/checkpoints.py``).

The record is a small JSON object at ``obs://<bucket>/.majob/checkpoints/<digest>.json``, the
digest taken over the folder's ``obs://`` path: in the folder's own bucket (a submit can write
there: the pre-flight proved it), and outside the checkpoint folder and its output, so no
container downloads it and no script that loads ``sorted(os.listdir(ckpt))[0]`` loads it. (Only
an input or output that is a whole bucket would hold it, as it holds everything else there.)
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal

from majob.errors import StorageNotFound
from majob.storage.base import ObjectStore
from majob.storage.uri import ObsUri

OWNER_PREFIX = ".majob/checkpoints/"
OWNER_FORMAT = 1
MAX_RECORD = 64 * 1024  # bytes: a bigger object there is not majob's record

State = Literal["owned", "copying"]


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass(frozen=True)
class Owner:
    """The owner record of one checkpoint folder. ``state`` is ``copying`` while a
    ``--resume-from`` copy fills the folder (a copy stopped by a kill says so), else ``owned``;
    ``resumed_from`` is the folder the checkpoints were copied from, if any."""

    folder: str
    stage: str
    spec: str
    spec_digest: str
    job_name: str
    job_id: str = ""
    submit_id: str = ""
    written: str = field(default_factory=utc_now)
    state: State = "owned"
    resumed_from: str = ""

    def said(self) -> str:
        """``the debug stage (job mnist-debug 6f1c..., spec 1a2b3c4d, 2024-05-01T10:00:00Z)``"""
        job = f"job {self.job_name}" + (f" {self.job_id}" if self.job_id else "")
        return f"the {self.stage} stage ({job}, spec {self.spec_digest[:8]}, {self.written})"

    def to_json(self) -> bytes:
        return json.dumps({"format": OWNER_FORMAT, **asdict(self)}, indent=1).encode()

    @classmethod
    def from_json(cls, data: bytes) -> Owner | None:
        """The record in ``data``; None when it is not one (unreadable, or another format)."""
        try:
            loaded: Any = json.loads(data)
        except (UnicodeDecodeError, ValueError):
            return None
        names = {f.name for f in fields(cls)}
        if not isinstance(loaded, dict) or loaded.get("format") != OWNER_FORMAT:
            return None
        values = {k: v for k, v in loaded.items() if k in names}
        if not all(isinstance(v, str) for v in values.values()) or not names <= set(values):
            return None
        if values["state"] not in ("owned", "copying"):
            return None
        return cls(**values)

    def with_job(self, job_name: str, job_id: str) -> Owner:
        return replace(self, job_name=job_name, job_id=job_id, written=utc_now())


def owner_uri(folder: ObsUri) -> ObsUri:
    """Where the owner record of ``folder`` is kept (outside every channel; see above)."""
    digest = hashlib.sha256(folder.as_dir().uri.encode()).hexdigest()[:40]
    return ObsUri(folder.bucket, f"{OWNER_PREFIX}{digest}.json")


def read_owner(store: ObjectStore, folder: ObsUri) -> Owner | None:
    """The owner record of ``folder``; None when there is none, or none majob can read."""
    where = owner_uri(folder)
    head = store.head(where.bucket, where.key)
    if head is None or head.size > MAX_RECORD:
        return None
    try:
        owner = Owner.from_json(store.get_bytes(where.bucket, where.key))
    except StorageNotFound:  # deleted since the HEAD
        return None
    return owner if owner is not None and owner.folder == folder.as_dir().uri else None


def write_owner(store: ObjectStore, owner: Owner) -> None:
    where = owner_uri(ObsUri.parse(owner.folder))
    store.put_bytes(where.bucket, where.key, owner.to_json())
