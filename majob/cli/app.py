"""The ``majob`` Typer application, composed from the command modules.

Nothing heavy is imported here, not even Typer: commands import what they need inside their
bodies, so that ``majob --help`` and ``majob validate`` start fast (a test pins the modules they
load); a run of one command (``main``) builds only the module that defines it (``build_app``),
and the root's own help is printed from the command table (``majob.cli.roothelp``).
"""

from __future__ import annotations

import atexit
import copy
import gc
import importlib
import os
import sys
from functools import cache
from typing import TYPE_CHECKING, Any, NoReturn

from majob.cli.command_index import COMMAND_MODULES

if TYPE_CHECKING:
    import typer

# The root's page, printed from the command table alone (majob.cli.roothelp): with no arguments
# Click shows it and exits 2, as for any group with no_args_is_help.
_ROOT_HELP_EXIT = {("--help",): 0, (): 2}

# Commands that read and print, and write nothing but their output (or one file they close):
# they end with os._exit once atexit has run and stdout and stderr are flushed. Python's own
# finalisation frees every object one by one, about 50 ms after pydantic built the spec's models
# (a sixth of `majob validate`), for nothing: the process is over.
_EXITS_AT_ONCE = frozenset({"validate", "compile", "schema"})


def build_app(command: str | None = None, sub: str | None = None) -> typer.Typer:
    """``majob`` with every command, or with only the module that defines ``command`` (none for
    ``""``); of a group (``majob obs``), only its command ``sub`` when it has one.

    Typer builds the Click command of every function it holds before it parses anything: for all
    of majob's commands that is an import of each command module and an inspection of each
    parameter's type hints, about a third of a short command's start-up. A run of one command
    builds that command alone (of a group, the one subcommand), ``--version`` none; help and
    unknown names get them all."""
    from majob.cli.root import root_app

    root = root_app()
    for module, attribute, names in COMMAND_MODULES:
        if command is None or command in names:
            group = getattr(importlib.import_module(f"majob.cli.{module}"), attribute)
            if command is None:
                root.add_typer(group)
            elif isinstance(group.info.name, str):  # a group: `majob obs ...`
                root.add_typer(_only(group, sub) if sub else group)
            else:  # a module's commands merged into `majob`: the one asked for
                root.registered_commands += _named(group.registered_commands, command)
    return root


def _named(infos: list[Any], name: str) -> list[Any]:
    """The commands (or groups) of ``infos`` called ``name``."""
    from typer.main import get_command_name

    def called(info: Any) -> str | None:
        if isinstance(getattr(info, "name", None), str):
            return str(info.name)
        callback = getattr(info, "callback", None)
        return get_command_name(callback.__name__) if callback is not None else None

    return [info for info in infos if called(info) == name]


def _only(group: typer.Typer, name: str) -> typer.Typer:
    """``group`` holding only its command or subgroup ``name`` (all of it when it has none:
    Click then says "No such command" with the group's own list)."""
    commands, groups = (
        _named(group.registered_commands, name),
        _named(group.registered_groups, name),
    )
    if not commands and not groups:
        return group
    one = copy.copy(group)
    one.registered_commands, one.registered_groups = commands, groups
    return one


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
    command = _command_named(args)
    if command in _EXITS_AT_ONCE:
        # Importing pydantic and building the spec's models allocates ~10^5 objects: at the
        # default threshold (700) the cyclic collector runs ~90 times over a heap of live
        # objects it cannot free (~15 ms). These commands live for a fraction of a second, so it
        # runs rarely here; a validate of thousands of specs still has its garbage collected.
        gc.set_threshold(100_000, 50, 100)
    sub = args[1] if command and len(args) > 1 and not args[1].startswith("-") else None
    app = build_app(command, sub)
    if command not in _EXITS_AT_ONCE:
        app()
        return
    try:
        app()
    except SystemExit as stop:
        _exit_at_once(stop.code)
    _exit_at_once(0)


def _exit_at_once(code: object) -> NoReturn:
    """End the process as ``sys.exit(code)`` would, without the interpreter's finalisation."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # sys.exit("message"): printed, exit 1
        print(code, file=sys.stderr)
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`majob validate ... | head -0`)
            status = status or 1
    os._exit(status)
