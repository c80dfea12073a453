"""The ``majob`` Typer application, composed from the command modules.

Nothing heavy is imported here, not even Typer: commands import what they need inside their
bodies, so that ``majob --help`` and ``majob validate`` start fast (a test pins the modules they
load); a run of one command (``main``) builds only the module that defines it (``build_app``),
and the root's own help is printed from the command table (``majob.cli.roothelp``).
"""

from __future__ import annotations

import importlib
import sys
from functools import cache
from typing import TYPE_CHECKING

from majob.cli.command_index import COMMAND_MODULES

if TYPE_CHECKING:
    import typer

# The root's page, printed from the command table alone (majob.cli.roothelp): with no arguments
# Click shows it and exits 2, as for any group with no_args_is_help.
_ROOT_HELP_EXIT = {("--help",): 0, (): 2}


def build_app(command: str | None = None) -> typer.Typer:
    """``majob`` with every command, or with only the module that defines ``command`` (none for
    ``""``).

    Typer builds the Click command of every function it holds before it parses anything: for all
    of majob's commands that is an import of each command module and an inspection of each
    parameter's type hints, about a third of a short command's start-up. A run of one command
    builds that command's module alone, ``--version`` none; help and unknown names get them all."""
    from majob.cli.root import root_app

    root = root_app()
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
    args = sys.argv[1:]
    if tuple(args) in _ROOT_HELP_EXIT:
        from majob.cli.roothelp import print_root_help

        print_root_help()
        raise SystemExit(_ROOT_HELP_EXIT[tuple(args)])
    build_app(_command_named(args))()
