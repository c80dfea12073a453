"""The ``majob`` Typer application, composed from the command modules.

Nothing heavy is imported here: commands import what they need inside their bodies, so that
``majob --help`` and ``majob validate`` start fast (a test pins the modules they load), and a
run of one command (``main``) builds only the module that defines it (``build_app``).
"""

from __future__ import annotations

import importlib
import sys
from functools import cache
from typing import Annotated

import typer

from majob.cli.helpformat import PlainHelpGroup

# The command modules in the order `majob --help` lists them: (module under majob.cli, its Typer,
# the top-level names that Typer adds). A Typer with a name is a group (`majob obs ...`); one
# without merges its commands into `majob`. A test holds these names to what the modules define.
COMMAND_MODULES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("spec_commands", "commands", ("validate", "compile", "schema", "init")),
    ("run", "commands", ("run",)),
    ("runs", "runs_app", ("runs",)),
    ("submit", "commands", ("submit",)),
    ("jobs", "commands", ("status", "logs", "list", "stop", "delete", "flavors", "engines")),
    ("pipeline", "commands", ("pipeline", "history", "checklist")),
    ("sweep", "commands", ("sweep",)),
    ("migrate", "commands", ("check", "migrate")),
    ("emulator", "emulator_app", ("emulator",)),
    ("obs", "obs_app", ("obs",)),
    ("sync", "commands", ("sync",)),
    ("image", "image_app", ("image",)),
    ("image", "env_app", ("env",)),
    ("precision", "commands", ("compare",)),
    ("perf", "commands", ("perf",)),
    ("data", "data_app", ("data",)),
)


APP_HELP = (
    "Move PyTorch training code to Huawei Cloud ModelArts: validate, compile, sync, run, submit."
)


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


def build_app(command: str | None = None) -> typer.Typer:
    """``majob`` with every command, or with only the module that defines ``command`` (none for
    ``""``).

    Typer builds the Click command of every function it holds before it parses anything: for all
    of majob's commands that is an import of each command module and an inspection of each
    parameter's type hints, about a third of a short command's start-up. A run of one command
    builds that command's module alone, ``--version`` none; help and unknown names get them all."""
    root = typer.Typer(
        name="majob",
        help=APP_HELP,
        no_args_is_help=True,
        pretty_exceptions_show_locals=False,
        add_completion=False,
        cls=PlainHelpGroup,
    )
    root.callback()(_root)
    for module, attribute, names in COMMAND_MODULES:
        if command is None or command in names:
            group = getattr(importlib.import_module(f"majob.cli.{module}"), attribute)
            root.add_typer(group)
    return root


@cache
def _full_app() -> typer.Typer:
    return build_app()


def __getattr__(name: str) -> typer.Typer:
    # `from majob.cli.app import app`: the whole application, built on first use.
    if name == "app":
        return _full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _command_named(args: list[str]) -> str | None:
    """The command ``args`` run, when it is one majob has (``""`` for ``--version`` alone: no
    command); None for other options first (``--help``) and for unknown names, which need every
    command to be answered."""
    if args == ["--version"]:
        return ""
    if not args or args[0].startswith("-"):
        return None
    known = {name for _, _, names in COMMAND_MODULES for name in names}
    return args[0] if args[0] in known else None


def main() -> None:
    """Console-script entry point."""
    build_app(_command_named(sys.argv[1:]))()
