"""What a user's ``obs://B/x`` names, listed: the one way majob reads a remote tree.

OBS has no folders, only keys, and a listing matches keys by string prefix: listing ``awk``
returns ``awkx/sibling`` and ``awk.txt`` too. Every majob command that takes an OBS path means
a folder, so ``obs://B/x`` and ``obs://B/x/`` both name the folder ``x/`` (the keys that start
with ``x/``, its own marker object ``x/`` included), and ``obs://B/x`` also names the object
called exactly ``x`` when there is one. No caller lists a bare string prefix: they list a
folder (``iter_folder``, ``list_folder``) or what a path names (``list_named``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from majob.storage.base import ObjectInfo, ObjectStore
from majob.storage.uri import ObsUri

LIST_PAGE = 1000  # the largest page OBS returns: one list request per 1,000 objects


def iter_folder(store: ObjectStore, uri: ObsUri) -> Iterator[ObjectInfo]:
    """Every object in the folder ``uri`` names (``x/`` for ``obs://B/x``; the whole bucket
    for its root), page by page as they come; the store retries each page request."""
    prefix = uri.as_dir().key
    marker: str | None = None
    while True:
        page = store.list_page(uri.bucket, prefix, marker=marker, max_keys=LIST_PAGE)
        # A listing holds only keys below the prefix; one that does not is not ours to touch.
        yield from (info for info in page.objects if info.key.startswith(prefix))
        if page.next_marker is None:
            return
        marker = page.next_marker


def list_folder(store: ObjectStore, uri: ObsUri) -> list[ObjectInfo]:
    """``iter_folder`` as a list: the listing sync and download read."""
    return list(iter_folder(store, uri))


def object_named(store: ObjectStore, uri: ObsUri) -> ObjectInfo | None:
    """The object called exactly ``uri.key``; None when there is none, and for a folder path
    (``x/`` or the bucket root), which names no object of its own but its marker."""
    if uri.is_dir:
        return None
    return store.head(uri.bucket, uri.key)


@dataclass(frozen=True)
class Named:
    """What ``obs://B/x`` names: the object ``x`` (``exact``) and the objects of folder ``x/``
    (``below``, its marker ``x/`` first when there is one)."""

    uri: ObsUri
    exact: ObjectInfo | None
    below: tuple[ObjectInfo, ...]

    @property
    def folder(self) -> ObsUri:
        return self.uri.as_dir()

    @property
    def objects(self) -> list[ObjectInfo]:
        """Every object named: the exact one first, then the folder's."""
        return ([self.exact] if self.exact is not None else []) + list(self.below)

    @property
    def marker(self) -> ObjectInfo | None:
        """The folder's own marker object (``x/``), the console's "empty folder"."""
        key = self.folder.key
        found = next((info for info in self.below if info.key == key), None)
        return found if key else None

    @property
    def files(self) -> list[ObjectInfo]:
        """The folder's objects that are not folder markers (keys not ending with ``/``)."""
        return [info for info in self.below if not info.key.endswith("/")]


def list_named(store: ObjectStore, uri: ObsUri) -> Named:
    """The object ``uri`` names exactly (for a path without a trailing ``/``) and its folder's
    objects: one HEAD and one listing of ``x/``, never of the bare string ``x``."""
    return Named(uri, object_named(store, uri), tuple(list_folder(store, uri)))
