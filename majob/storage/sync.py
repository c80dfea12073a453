"""Sync a local directory to an OBS prefix: plan (pure, printable), then apply.

::

    local tree  --walk_files + HashCache-->  [LocalFile]  \\
                                                           plan_sync -> SyncPlan -apply-> SyncResult
    OBS prefix  --one paged listing------->  [ObjectInfo] /

``sync_dir`` is what ``majob obs sync`` runs, and what ``majob.service.code`` runs to put a
spec's code at ``code.obs``. A caller that has walked and hashed the tree already (a submit
digests the code it uploads) passes that scan as ``scanned``: the tree is walked once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from majob.errors import UserInputError
from majob.storage.base import ObjectStore
from majob.storage.dirs import default_cache_dir
from majob.storage.listing import list_folder
from majob.storage.localstate import HashCache, UploadRecords
from majob.storage.plan import CachedDigests, LocalFile, SyncPlan, plan_sync, scan_local
from majob.storage.transfer import SyncResult, TransferOptions, apply_plan
from majob.storage.uri import ObsUri

if TYPE_CHECKING:
    from rich.console import Console


def make_plan(
    store: ObjectStore,
    source: Path,
    dest: ObsUri,
    *,
    ignore: Iterable[str] = (),
    delete: bool = False,
    cache_dir: Path | None = None,
    lazy_from: int | None = None,
    allow_secrets: bool = False,
    scanned: Sequence[LocalFile] | None = None,
) -> SyncPlan:
    """Walk and hash ``source`` (files of ``lazy_from`` bytes or more only when a comparison
    needs it; not at all when it was ``scanned``), list ``dest`` once, and decide what a sync
    would do. Files that look like secrets are left out (``plan.withheld``) unless
    ``allow_secrets``."""
    cache = HashCache.for_root(source, cache_dir)
    plan = _plan(store, source, dest, cache, ignore, delete, lazy_from, allow_secrets, scanned)
    cache.save()
    return plan


def _plan(
    store: ObjectStore,
    source: Path,
    dest: ObsUri,
    cache: HashCache,
    ignore: Iterable[str],
    delete: bool,
    lazy_from: int | None,
    allow_secrets: bool,
    scanned: Sequence[LocalFile] | None,
) -> SyncPlan:
    if not source.is_dir():
        raise UserInputError(
            f"{source} is not a directory",
            hint="sync takes a local directory and an obs://bucket/prefix/",
        )
    withheld: list[str] = []
    dest = dest.as_dir()
    # The listing waits on the server while the walk and the hashing use this machine's CPU: it
    # is asked first, in a thread of its own, and its answer taken after the walk (a walk that
    # fails does not wait for it).
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="majob-list")
    try:
        listing = pool.submit(list_folder, store, dest)
        local = (
            list(scanned)
            if scanned is not None
            else scan_local(
                source,
                ignore,
                cache,
                lazy_from=lazy_from,
                allow_secrets=allow_secrets,
                on_withheld=withheld.append,
            )
        )
        remote = listing.result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return plan_sync(
        source,
        local,
        dest,
        remote,
        delete=delete,
        head=lambda key: store.head(dest.bucket, key),
        digests=CachedDigests(cache),
        withheld=withheld,
    )


def sync_dir(
    store: ObjectStore,
    source: Path,
    dest: ObsUri,
    *,
    ignore: Iterable[str] = (),
    delete: bool = False,
    dry_run: bool = False,
    options: TransferOptions | None = None,
    cache_dir: Path | None = None,
    console: Console | None = None,
    on_plan: Callable[[SyncPlan], None] | None = None,
    allow_secrets: bool = False,
    scanned: Sequence[LocalFile] | None = None,
) -> tuple[SyncPlan, SyncResult | None]:
    """Make ``dest`` hold the non-ignored files of ``source`` (files that look like secrets
    only with ``allow_secrets``; ``scanned``: the walk already made). ``on_plan`` sees the plan
    before anything moves; ``dry_run`` stops there (the result is then None)."""
    options = options or TransferOptions()
    cache = HashCache.for_root(source, cache_dir)
    plan = _plan(
        store,
        source,
        dest,
        cache,
        ignore,
        delete,
        options.multipart_threshold,
        allow_secrets,
        scanned,
    )
    cache.save()
    if on_plan is not None:
        on_plan(plan)
    if dry_run:
        return plan, None
    records = UploadRecords((cache_dir or default_cache_dir()) / "uploads.json")
    try:
        result = apply_plan(store, plan, options, records=records, console=console, hashes=cache)
    finally:
        if plan.uploads:
            cache.save()  # with the multipart ETags of what was sent: the next run reads nothing
    return plan, result
