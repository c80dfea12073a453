"""Help that shows ordinary metavars (PATH, TEXT, INTEGER, [a|b]) and nothing for flags.

Typer 0.29 labels every parameter in its rich help with the Python annotation (``<list[Path]>``,
``<str>``, and ``<bool>`` even for flags, which take no value) and has no setting to change it.
An option's label is its ``metavar`` when one is set, so the root group gives each option the
metavar Click would have shown before a command runs or prints its help; an argument's label
ignores ``metavar``, so arguments get a subclass whose only change is that label. Earlier Typer
releases (built on Click) already show these metavars and are left as they are.
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

import typer.core

_NAMES: dict[Any, str] = {str: "TEXT", int: "INTEGER", float: "FLOAT", bool: "BOOLEAN"}


def plain_metavar(descriptor: Any) -> str:
    """What Click would print for a value of this type: ``TEXT``, ``PATH``, ``[a|b]``..."""
    choices = getattr(descriptor, "choices", None)
    if choices:
        return (
            "[" + "|".join(str(c.value if isinstance(c, enum.Enum) else c) for c in choices) + "]"
        )
    annotation = descriptor.annotation
    if typing.get_origin(annotation) in (list, tuple) and typing.get_args(annotation):
        annotation = typing.get_args(annotation)[0]  # a repeatable option: one value's metavar
    if annotation in _NAMES:
        return _NAMES[annotation]
    if isinstance(annotation, type) and issubclass(annotation, PurePath):
        return "PATH"
    return str(getattr(annotation, "__name__", "VALUE")).upper()


class _PlainArgument(typer.core.TyperArgument):
    """A ``TyperArgument`` whose help label is the plain metavar."""

    def display_type_rich(self, ctx: Any) -> str | None:
        return plain_metavar(self.type_descriptor)  # the name column says "..." when repeated


def _plain(params: Sequence[Any]) -> None:
    for param in params:
        descriptor = getattr(param, "type_descriptor", None)
        if descriptor is None:  # a Click-based Typer: its help is already plain
            continue
        if isinstance(param, typer.core.TyperArgument):
            if not isinstance(param, _PlainArgument):
                param.__class__ = _PlainArgument  # same object, same parsing: only the label
        elif isinstance(param, typer.core.TyperOption) and param.metavar is None:
            param.metavar = "" if param.is_flag or param.count else plain_metavar(descriptor)


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
