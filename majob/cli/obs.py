"""``majob obs``: ls, cp, sync, rm and mb on OBS (or the emulator), through one ``ObjectStore``.

The store, the sync engine and rich are imported inside the command bodies: ``majob --help``
must not load esdk-obs-python.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from majob.cli.common import print_sync_plan, user_errors
from majob.errors import ConfigError, UserInputError
from majob.text import counted

if TYPE_CHECKING:
    from majob.storage.base import ObjectStore
    from majob.storage.transfer import TransferOptions
    from majob.storage.uri import ObsUri

obs_app = typer.Typer(
    name="obs",
    help="List, copy, sync and remove objects on OBS; make buckets.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)

MiB = 1 << 20

Endpoint = Annotated[
    str | None,
    typer.Option(
        "--endpoint",
        help="OBS endpoint URL (default: $MAJOB_OBS_ENDPOINT, else from the region).",
        show_default=False,
    ),
]
Region = Annotated[
    str | None,
    typer.Option(
        "--region", help="Region, e.g. cn-north-4 (default: $MAJOB_OBS_REGION).", show_default=False
    ),
]
ObsProfile = Annotated[
    str | None,
    typer.Option(
        "--profile",
        help="Reach the OBS of this profile (`emulator`: the running emulator's). Default: the "
        "MAJOB_OBS_* settings.",
        show_default=False,
    ),
]
Jobs = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        max=64,
        help="Transfers in flight (default: 32; 8 when OBS answers within 5 ms).",
        show_default=False,
    ),
]
AllowSecrets = Annotated[
    bool,
    typer.Option(
        "--allow-secrets",
        help="Upload files that look like secrets (.env, id_rsa*, *.pem...) too; they are left "
        "out otherwise ('!NAME' in .majobignore lets one in).",
    ),
]
PartSize = Annotated[
    int, typer.Option("--part-size", min=1, max=5120, help="Multipart part size, in MiB.")
]
Threshold = Annotated[
    int,
    typer.Option("--multipart-threshold", min=1, help="Files this large (MiB) are sent in parts."),
]


@contextmanager
def _opened_store(
    endpoint: str | None, region: str | None, profile: str | None = None
) -> Iterator[ObjectStore]:
    """The store the flags, the profile (if named) and the environment name, closed when the
    command is done; ``--endpoint`` and ``--region`` win over the profile's."""
    from dataclasses import replace

    from majob.storage.config import ObsConfig
    from majob.storage.obs import open_store

    if profile is None:
        config = ObsConfig.from_env(endpoint=endpoint, region=region)
    else:
        from majob.service.connect import obs_config
        from majob.spec.profiles import load_profile

        config = obs_config(load_profile(profile))
        config = replace(
            config, endpoint=endpoint or config.endpoint, region=region or config.region
        )
    store = open_store(config)
    try:
        yield store
    finally:
        store.close()


def _parse_obs(text: str) -> ObsUri:
    from majob.storage.uri import ObsUri

    return ObsUri.parse(text)


def _is_obs(text: str) -> bool:
    return text.startswith("obs://")


def _options(jobs: int | None, part_size: int, threshold: int) -> TransferOptions:
    from majob.storage.transfer import TransferOptions

    return TransferOptions(
        jobs=jobs, part_size=part_size * MiB, multipart_threshold=threshold * MiB
    )


HEAD_LINES = 20  # files a dry run lists without -v (rclone-style: a head, then a count)


@obs_app.command("ls")
@user_errors
def ls(
    uri: Annotated[str, typer.Argument(help="obs://bucket/folder/ (or obs://bucket/name)")],
    recursive: Annotated[
        bool, typer.Option("--recursive", "-r", help="Every object below, not one level.")
    ] = False,
    endpoint: Endpoint = None,
    region: Region = None,
    profile: ObsProfile = None,
) -> None:
    """List an object and what is in its folder (one level; every object in it with -r).

    obs://b/x lists the object x, if there is one, and what is in the folder x/; never xy.
    """
    from majob.cli.obs_paths import print_listing

    location = _parse_obs(uri)
    with _opened_store(endpoint, region, profile) as store:
        print_listing(store, location, recursive)


@obs_app.command("cp")
@user_errors
def cp(
    src: Annotated[str, typer.Argument(help="A local path or obs://bucket/key.")],
    dst: Annotated[str, typer.Argument(help="A local path or obs://bucket/key (dir/ for a dir).")],
    recursive: Annotated[
        bool, typer.Option("--recursive", "-r", help="Copy a directory or a whole folder.")
    ] = False,
    jobs: Jobs = None,
    part_size: PartSize = 16,
    multipart_threshold: Threshold = 64,
    endpoint: Endpoint = None,
    region: Region = None,
    profile: ObsProfile = None,
    allow_secrets: AllowSecrets = False,
) -> None:
    """Copy a file or (with -r) a directory to OBS, or an object or (with -r) a folder from OBS."""
    if _is_obs(src) == _is_obs(dst):
        raise UserInputError(
            f"cp copies between a local path and OBS, got {src!r} and {dst!r}",
            hint="one of the two must start with obs://",
        )
    from majob.cli.obs_paths import download, upload

    options = _options(jobs, part_size, multipart_threshold)
    with _opened_store(endpoint, region, profile) as store:
        if _is_obs(dst):
            upload(store, Path(src), _parse_obs(dst), recursive, options, allow_secrets)
        else:
            # "out/" names a directory even before it exists (Path drops the slash).
            into_dir = dst.endswith(("/", os.sep))
            download(store, _parse_obs(src), Path(dst), recursive, options, into_dir)


@obs_app.command("sync")
@user_errors
def sync(
    src: Annotated[Path, typer.Argument(help="Local directory.")],
    dst: Annotated[str, typer.Argument(help="obs://bucket/folder/")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan; upload and delete nothing.")
    ] = False,
    delete: Annotated[
        bool, typer.Option("--delete", help="Delete objects in the folder not in the source.")
    ] = False,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="Extra gitignore-style pattern (repeatable)."),
    ] = None,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            help=f"List every planned file (a dry run lists the first {HEAD_LINES}).",
        ),
    ] = False,
    jobs: Jobs = None,
    part_size: PartSize = 16,
    multipart_threshold: Threshold = 64,
    endpoint: Endpoint = None,
    region: Region = None,
    profile: ObsProfile = None,
    allow_secrets: AllowSecrets = False,
) -> None:
    """Make an OBS folder hold the files of a local directory (only what changed moves).

    Honours .gitignore and .majobignore at every level; prints the plan before anything moves.
    """
    from majob.storage.sync import sync_dir

    location = _parse_obs(dst)
    options = _options(jobs, part_size, multipart_threshold)
    with _opened_store(endpoint, region, profile) as store:
        _, result = sync_dir(
            store,
            src,
            location.as_dir(),
            ignore=exclude or (),
            delete=delete,
            dry_run=dry_run,
            options=options,
            on_plan=lambda plan: print_sync_plan(
                plan, None if verbose else HEAD_LINES if dry_run else 0
            ),
            allow_secrets=allow_secrets,
        )
    if result is None:
        typer.echo("dry run: nothing uploaded or deleted")
    else:
        typer.echo(result.summary_line())


@obs_app.command("rm")
@user_errors
def rm(
    uri: Annotated[str, typer.Argument(help="obs://bucket/key, or a folder with -r")],
    recursive: Annotated[
        bool,
        typer.Option(
            "--recursive", "-r", help="Remove the folder URI/ (and the object URI) entirely."
        ),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    endpoint: Endpoint = None,
    region: Region = None,
    profile: ObsProfile = None,
) -> None:
    """Remove an object or an empty folder's marker; with -r, a folder and all in it.

    obs://b/x with -r removes the folder x/ and the object x; never xy or x.txt.
    """
    from majob.cli.obs_paths import keys_to_remove, what_is_removed

    location = _parse_obs(uri)
    with _opened_store(endpoint, region, profile) as store:
        keys = keys_to_remove(store, location, recursive)
        if not keys:
            typer.echo(f"nothing to remove: {what_is_removed(location, keys)}")
            return
        what = what_is_removed(location, keys)
        if not yes:
            if not sys.stdin.isatty():
                raise ConfigError(
                    f"refusing to remove {what} without confirmation", hint="pass --yes"
                )
            if not typer.confirm(f"remove {what}?"):
                raise typer.Exit(1)
        for start in range(0, len(keys), 1000):
            store.delete_many(location.bucket, keys[start : start + 1000])
        typer.echo(f"removed {counted(len(keys), 'object')}: {what}")


@obs_app.command("mb")
@user_errors
def mb(
    bucket: Annotated[str, typer.Argument(help="obs://bucket (or the bare bucket name)")],
    endpoint: Endpoint = None,
    region: Region = None,
    profile: ObsProfile = None,
) -> None:
    """Make a bucket, in the region of the endpoint (a bucket that is yours already is left)."""
    from majob.storage.uri import bucket_name_problem

    name = bucket.removeprefix("obs://").rstrip("/")
    if "/" in name:
        raise UserInputError(
            f"{bucket}: give a bucket, not a path", hint=f"obs://{name.split('/')[0]}"
        )
    if problem := bucket_name_problem(name):
        raise UserInputError(f"{bucket}: {problem}")
    with _opened_store(endpoint, region, profile) as store:
        created = store.create_bucket(name)
    typer.echo(f"made bucket obs://{name}" if created else f"bucket obs://{name} is yours already")
