"""The root of the ``majob`` Typer application: its help and ``--version``."""

from __future__ import annotations

from typing import Annotated

import typer

from majob.cli.command_index import APP_HELP
from majob.cli.helpformat import PlainHelpGroup


def _print_version(value: bool) -> None:
    if not value:
        return
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("majob")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from majob.version import __version__ as installed
    typer.echo(f"majob {installed}")
    raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print majob's version."
        ),
    ] = False,
) -> None:
    """Move PyTorch training code to Huawei Cloud ModelArts: validate, compile, sync, run."""


def root_app() -> typer.Typer:
    """``majob`` with no command yet: the group the command modules are added to."""
    root = typer.Typer(
        name="majob",
        help=APP_HELP,
        no_args_is_help=True,
        pretty_exceptions_show_locals=False,
        add_completion=False,
        cls=PlainHelpGroup,
    )
    root.callback()(_root)
    return root
