"""One listing of a prefix, page by page: the only way sync and download read a remote tree."""

from __future__ import annotations

from majob.storage.base import ObjectInfo, ObjectStore

LIST_PAGE = 1000  # the largest page OBS returns: one list request per 1,000 objects


def list_remote(store: ObjectStore, bucket: str, prefix: str) -> list[ObjectInfo]:
    """Every object below ``prefix``, page by page (the store retries each page request)."""
    objects: list[ObjectInfo] = []
    marker: str | None = None
    while True:
        page = store.list_page(bucket, prefix, marker=marker, max_keys=LIST_PAGE)
        objects.extend(page.objects)
        if page.next_marker is None:
            return objects
        marker = page.next_marker
