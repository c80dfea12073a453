"""One listing of a prefix, page by page: the only way sync and download read a remote tree."""

from __future__ import annotations

from majob.storage.base import ObjectInfo, ObjectStore
from majob.storage.retry import with_retries

LIST_PAGE = 1000  # the largest page OBS returns: one list request per 1,000 objects


def list_remote(
    store: ObjectStore, bucket: str, prefix: str, *, attempts: int = 3
) -> list[ObjectInfo]:
    """Every object below ``prefix``, page by page, each page retried on a transient failure."""
    objects: list[ObjectInfo] = []
    marker: str | None = None
    while True:
        page = with_retries(
            lambda m=marker: store.list_page(bucket, prefix, marker=m, max_keys=LIST_PAGE),  # type: ignore[misc]
            attempts=attempts,
            endpoint_answered=marker is not None,  # the first page is the first request
        )
        objects.extend(page.objects)
        if page.next_marker is None:
            return objects
        marker = page.next_marker
