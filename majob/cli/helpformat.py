"""Help that shows ordinary metavars (PATH, TEXT, INTEGER, [a|b]) and nothing for flags.

Typer 0.26-0.28 (pinned in pyproject: 0.29 imports pydantic for every command, see there) label
each parameter in the rich help with its type's name in angle brackets (``<path>``, ``<str>``,
``<int range>``, ``<gpu|npu>``) and have no setting to change it. An option's label is its
``metavar`` when one is set, so the root group gives each option the metavar Click shows before a
command runs or prints its help. An argument's label comes from its type, so each argument gets
its own copy of its type whose only change is that label, and a subclass that keeps the label out
of the usage line. Under a Typer outside the pinned range (upgraded after majob was installed)
the parameters are left as that Typer labels them: the help reads differently, nothing breaks.
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Sequence
from typing import Any

import typer.core

# Click's names for the types Typer gives its parameters (a range shows its bounds separately).
_NAMES = {
    "str": "TEXT",
    "int": "INTEGER",
    "int range": "INTEGER",
    "float": "FLOAT",
    "float range": "FLOAT",
}


def plain_metavar(kind: Any) -> str:
    """What Click prints for a value of the parameter type ``kind``: ``TEXT``, ``PATH``..."""
    choices = getattr(kind, "choices", None)
    if choices:
        return (
            "[" + "|".join(str(c.value if isinstance(c, enum.Enum) else c) for c in choices) + "]"
        )
    name = str(getattr(kind, "name", "value"))
    return _NAMES.get(name, name.upper())


class _PlainLabel:
    """Mixed into a copy of an argument's type: the help's type column reads this."""

    def get_metavar(self, param: Any, ctx: Any) -> str | None:
        return plain_metavar(self)


_PLAIN_TYPES: dict[type, type] = {}


def _plain_type_class(kind: type) -> type:
    if kind not in _PLAIN_TYPES:
        _PLAIN_TYPES[kind] = type(f"Plain{kind.__name__}", (_PlainLabel, kind), {})
    return _PLAIN_TYPES[kind]


class _PlainArgument(typer.core.TyperArgument):
    """A ``TyperArgument`` whose usage shows its name alone (``{paths}...``), not ``:PATH``."""

    def make_metavar(self, ctx: Any, *, usage: bool = False) -> str:
        if self.metavar is not None:
            return super().make_metavar(ctx, usage=usage)
        name = self.name or ""
        if usage:
            name = f"{{{name}}}" if self.required else f"[{name}]"
        return name + ("..." if self.nargs != 1 else "")


def _plain(params: Sequence[Any]) -> None:
    for param in params:
        if getattr(param, "type", None) is None:
            continue  # a Typer outside the pinned range (0.29 has no click type): its own labels
        if isinstance(param, typer.core.TyperArgument):
            if not isinstance(param, _PlainArgument):
                param.__class__ = _PlainArgument  # same object, same parsing: only the labels
                kind = copy.copy(param.type)  # its own copy: types like STRING are shared
                kind.__class__ = _plain_type_class(type(param.type))
                param.type = kind
        elif isinstance(param, typer.core.TyperOption) and param.metavar is None:
            param.metavar = "" if param.is_flag or param.count else plain_metavar(param.type)


def _plain_tree(command: Any, ctx: Any) -> None:
    _plain(command.get_params(ctx))
    for sub in getattr(command, "commands", {}).values():
        _plain_tree(sub, ctx)


class PlainHelpGroup(typer.core.TyperGroup):
    """The root group: its own parameters and each command it hands out get plain labels."""

    def get_params(self, ctx: Any) -> list[Any]:
        params = super().get_params(ctx)
        _plain(params)
        return params

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _plain_tree(command, ctx)
        return command
