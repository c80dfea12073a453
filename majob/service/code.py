"""A spec's code on its way to OBS: scanned once, digested, uploaded to ``code.obs``.

One ``majob submit`` walks and hashes ``code.dir`` once (``scan_code``); the same files give the
submit id's code digest, the ledger's fingerprint (``majob.pipeline.digests``) and the upload
(``sync_code`` with ``files=``). A single PUT carries the scanned MD5 as its ``Content-MD5``, so
a file changed since the scan fails its upload instead of going up unlike what was recorded.

``majob sync SPEC`` runs ``sync_code`` too, scanning as it goes: the set of files sent
(``code.dir`` minus ``code.ignore``, .gitignore/.majobignore and likely secrets) cannot differ.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from majob.errors import CompileError, UserInputError
from majob.spec.models import JobSpec
from majob.storage.localstate import HashCache
from majob.storage.plan import LocalFile, SyncPlan, scan_local
from majob.storage.sync import sync_dir
from majob.storage.transfer import SyncResult, TransferOptions

if TYPE_CHECKING:
    from rich.console import Console

    from majob.storage.base import ObjectStore


def scan_code(spec: JobSpec, *, cache_dir: Path | None = None) -> tuple[LocalFile, ...]:
    """The files of ``code.dir`` an upload sends, each hashed (through the hash cache)."""
    root = Path(spec.code.dir).resolve()
    cache = HashCache.for_root(root, cache_dir)
    files = tuple(scan_local(root, spec.code.ignore, cache))
    cache.save()
    return files


def file_digests(files: Iterable[LocalFile]) -> dict[str, str]:
    """Each file's path and what stands for its content: its MD5 (else its size and mtime)."""
    return {f.rel: f.md5 or f"size={f.size};mtime={f.mtime_ns}" for f in files}


def code_digest(digests: Mapping[str, str]) -> str:
    """One digest of the code: every file's path and content digest, in path order."""
    digest = hashlib.sha256()
    for rel in sorted(digests):
        digest.update(f"{rel}\0{digests[rel]}\n".encode())
    return digest.hexdigest()


def sync_code(
    spec: JobSpec,
    store: ObjectStore,
    *,
    files: Sequence[LocalFile] | None = None,
    dry_run: bool = False,
    options: TransferOptions | None = None,
    cache_dir: Path | None = None,
    console: Console | None = None,
    on_plan: Callable[[SyncPlan], None] | None = None,
    allow_secrets: bool = False,
) -> tuple[SyncPlan, SyncResult | None]:
    """Upload the spec's ``code.dir`` to ``code.obs`` with its ``code.ignore`` rules (``files``:
    that scan, when the caller made it). Objects under ``code.obs`` that are no longer in the
    code are deleted: the job must see exactly the code that ran locally."""
    if spec.code.obs is None:
        raise CompileError(
            "the spec has no code.obs: nowhere to upload the code",
            hint="set code.obs to an OBS directory, e.g. obs://my-bucket/jobs/mnist/code/",
        )
    if not spec.code.obs.key:
        # Mirroring deletes what is not in the code: never at the root of a bucket.
        raise UserInputError(
            f"code.obs is the root of bucket {spec.code.obs.bucket!r}; the code must go to a "
            "directory of its own",
            hint=f"e.g. code.obs: obs://{spec.code.obs.bucket}/jobs/{spec.name}/code/",
        )
    return sync_dir(
        store,
        Path(spec.code.dir).resolve(),
        spec.code.obs,
        ignore=spec.code.ignore,
        delete=True,
        dry_run=dry_run,
        options=options,
        cache_dir=cache_dir,
        console=console,
        on_plan=on_plan,
        allow_secrets=allow_secrets,
        scanned=files,
    )
