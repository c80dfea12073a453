"""What ``majob obs ls``, ``rm`` and ``cp`` do with what an ``obs://`` path names.

``obs://B/x`` names the folder ``x/`` and the object called exactly ``x``; never ``xy`` or
``x.txt``, which only start with the same letters (``storage.listing``). ``obs://B/x/`` names
the folder alone. Command bodies import this module when they run: it loads the OBS side.
"""

from __future__ import annotations

from itertools import islice
from pathlib import Path

import typer

from majob.cli.common import print_sync_plan
from majob.errors import StorageNotFound, UserInputError
from majob.storage.base import ObjectInfo, ObjectStore
from majob.storage.listing import iter_folder, list_named, object_named
from majob.storage.transfer import REMOTE_JOBS, TransferOptions
from majob.storage.uri import ObsUri
from majob.text import counted, printable


def no_such_object(location: ObsUri) -> StorageNotFound:
    return StorageNotFound(
        "no such object", code="NoSuchKey", bucket=location.bucket, key=location.key
    )


def _first_objects(store: ObjectStore, location: ObsUri, count: int) -> list[ObjectInfo]:
    """The first ``count`` objects of the folder ``location`` names: one page at most."""
    return list(islice(iter_folder(store, location), count))


def _first_file(store: ObjectStore, location: ObsUri) -> ObjectInfo | None:
    """The first object of the folder ``location`` names that is not a folder marker."""
    return next((o for o in iter_folder(store, location) if not o.key.endswith("/")), None)


def _folder_error(location: ObsUri, example: str, what: str) -> UserInputError:
    return UserInputError(
        f"{printable(str(location))} is a folder with objects in it (e.g. {printable(example)}), "
        "not an object",
        hint=f"pass --recursive (-r) to {what}",
    )


def print_listing(store: ObjectStore, location: ObsUri, recursive: bool) -> None:
    """``ls``: the object ``x`` (if there is one), then the folder ``x/`` one level down
    (its folders as ``DIR``, its own marker left out) or, with -r, every object in it."""
    prefix = location.as_dir().key
    exact = object_named(store, location)
    found = exact is not None
    if exact is not None:
        typer.echo(f"{exact.size:>12}  {printable(exact.key)}")
    folders: set[str] = set()
    for info in iter_folder(store, location):
        found = True
        rest = info.key[len(prefix) :]
        if recursive:
            typer.echo(f"{info.size:>12}  {printable(info.key)}")
            continue
        name, slash, _ = rest.partition("/")
        if not rest:
            continue  # the folder's own marker: the folder being listed
        if not slash:
            typer.echo(f"{info.size:>12}  {printable(info.key)}")
        elif name not in folders:  # a subfolder: its marker or an object below it
            folders.add(name)
            typer.echo(f"{'DIR':>12}  {printable(prefix + name + '/')}")
    if not found and not location.is_dir:
        raise no_such_object(location)


def keys_to_remove(store: ObjectStore, location: ObsUri, recursive: bool) -> list[str]:
    """``rm``: with -r, every object ``location`` names (the object ``x`` and the folder ``x/``,
    marker included); without, the object itself, or a folder's marker when nothing else is
    in the folder. Anything else is one clear error, and nothing is removed."""
    if recursive:
        return [info.key for info in list_named(store, location).objects]
    if location.key == "":
        raise UserInputError(
            f"{printable(str(location))} is a bucket, not an object",
            hint="pass --recursive (-r) to remove every object in it",
        )
    if not location.is_dir and store.head(location.bucket, location.key) is not None:
        return [location.key]
    folder = location.as_dir()
    first = _first_objects(store, location, 2)
    others = [info for info in first if info.key != folder.key]
    if others:  # files, or the markers of folders below
        raise _folder_error(location, others[0].key, "remove the folder and everything in it")
    if not first:
        raise no_such_object(location)
    if location.is_dir:
        return [folder.key]  # the marker alone: the folder holds nothing else
    raise UserInputError(
        f"{printable(str(location))} is an empty folder: its marker object is "
        f"{printable(str(folder))}",
        hint=f"`majob obs rm {printable(str(folder))}` removes the marker",
    )


def what_is_removed(named_uri: ObsUri, keys: list[str]) -> str:
    """``rm``'s question and answer name what goes: the object, the folder, or both (and
    what was looked for, when there is nothing)."""
    folder = named_uri.as_dir()
    exact = not named_uri.is_dir and named_uri.key in keys
    in_folder = len(keys) - exact
    if not keys:
        return printable(
            f"nothing in {folder}" + ("" if named_uri.is_dir else f" and no object {named_uri}")
        )
    if keys == [folder.key]:
        return printable(f"the folder marker {folder}")
    parts = [str(named_uri)] if exact else []
    if in_folder:
        parts.append(f"{counted(in_folder, 'object')} in {folder}")
    return printable(" and ".join(parts))


def upload(
    store: ObjectStore,
    src: Path,
    dst: ObsUri,
    recursive: bool,
    options: TransferOptions,
    allow_secrets: bool = False,
) -> None:
    """``cp`` to OBS: a directory (with -r) into the folder ``dst``; a file into ``dst`` when
    that is a folder (``x/``, or ``x`` whose folder ``x/`` holds objects), else as ``dst``."""
    from majob.storage.localstate import file_md5
    from majob.storage.plan import LocalFile, plan_sync
    from majob.storage.sync import sync_dir
    from majob.storage.transfer import apply_plan

    if src.is_dir():
        if not recursive:
            raise UserInputError(f"{src} is a directory", hint="pass --recursive (-r)")
        _, result = sync_dir(
            store,
            src,
            dst.as_dir(),
            options=options,
            on_plan=print_sync_plan,
            allow_secrets=allow_secrets,
        )
        assert result is not None
        typer.echo(result.summary_line())
        return
    if not src.is_file():
        raise UserInputError(f"{src} does not exist or is not a file")
    into_folder = dst.is_dir or bool(_first_objects(store, dst, 1))
    target = dst.join(src.name) if into_folder else dst
    parent_key, _, name = target.key.rpartition("/")
    stat = src.stat()
    # A file sent in parts is hashed part by part as it is sent: not read beforehand.
    big = stat.st_size >= options.multipart_threshold
    local = LocalFile(name, src, stat.st_size, None if big else file_md5(src), stat.st_mtime_ns)
    parent = ObsUri(dst.bucket, parent_key + "/" if parent_key else "")
    plan = plan_sync(src.parent, [local], parent, [])
    result = apply_plan(store, plan, options)
    typer.echo(f"{printable(str(src))} -> {printable(str(target))}")
    typer.echo(result.summary_line())


def download(
    store: ObjectStore,
    src: ObsUri,
    dst: Path,
    recursive: bool,
    options: TransferOptions,
    into_dir: bool,
) -> None:
    """``cp`` from OBS: with -r, the folder ``src`` names into ``dst`` (or, when there is only
    the object ``x`` and no file in ``x/``, that object); without, the one object."""
    if src.is_dir and not recursive:
        raise UserInputError(f"{printable(str(src))} is a folder", hint="pass --recursive (-r)")
    if recursive and object_named(store, src) is None:
        _download_folder(store, src, dst, options)
        return
    if recursive and (inside := _first_file(store, src)) is not None:
        # The object x and the files of x/ cannot both land in dst: the user says which.
        raise UserInputError(
            f"{printable(str(src))} names both an object and a folder with files in it "
            f"(e.g. {printable(inside.key)})",
            hint=f"copy the folder with {printable(str(src.as_dir()))}, or the object without -r",
        )
    target = dst / src.name if into_dir or dst.is_dir() else dst
    _download_one(store, src, target)


def _download_one(store: ObjectStore, src: ObsUri, target: Path) -> None:
    from majob.storage.download import download_object

    try:
        _, verified = download_object(store, src, target)
    except StorageNotFound as error:
        inside = _first_objects(store, src, 1) if error.code == "NoSuchKey" else []
        if inside:
            raise _folder_error(src, inside[0].key, "copy the folder") from None
        raise
    typer.echo(f"{printable(str(src))} -> {printable(str(target))}")
    if not verified:
        typer.echo(f"warning: no MD5 known for {printable(str(src))}: not verified", err=True)


def _download_folder(store: ObjectStore, src: ObsUri, dst: Path, options: TransferOptions) -> None:
    from majob.storage.download import download_tree

    result = download_tree(store, src.as_dir(), dst, jobs=options.jobs or REMOTE_JOBS)
    typer.echo(
        f"downloaded {counted(result.downloaded, 'file')} "
        f"({counted(result.bytes, 'byte')}) to {printable(str(dst))}"
    )
    for key in result.unverified:
        typer.echo(f"warning: no MD5 known for {printable(key)}: not verified", err=True)
