"""Every problem of a spec, located: the collector the loader fills, and pydantic's validation
errors explained in majob's words (``unknown key 'bootfile'; did you mean 'boot_file'?``).

A problem is found by its field path (``resources.nodes``, ``inputs[0].local``); ``Positions``
maps each path to the ``file:line:col`` it was written at (or the ``--set`` that wrote it).
"""

from __future__ import annotations

import difflib
import types
import typing
from typing import Any

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from majob.errors import SpecError, SpecProblem
from majob.spec.fields import CHANNEL_PATTERN, NAME_PATTERN
from majob.spec.models import JobSpec
from majob.spec.positions import Loc, Positions
from majob.spec.rules import SpecRuleErrors

_SCALAR_TAGS = {"bool", "int", "float", "str"}


class Problems:
    """Collects problems and locates them through the positions map."""

    def __init__(self, positions: Positions) -> None:
        self.positions = positions
        self.items: list[SpecProblem] = []

    def add(self, loc: Loc, message: str, *, at_key: bool = False) -> None:
        path = dotted(loc)
        if any(p.path == path for p in self.items if p.message != message):
            return  # one problem per field: the first cause (e.g. an unset ${VAR}) is the one
        file, line, col = self.positions.find(loc, key=at_key)
        self.items.append(SpecProblem(file, line, col, path, message))

    def error(self) -> SpecError:
        return SpecError(list(dict.fromkeys(self.items)))

    def raise_if_any(self) -> None:
        if self.items:
            raise self.error()


def dotted(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_PATTERN_TEXT = {
    NAME_PATTERN: "must be 1-64 characters of letters, digits, '_' and '-'",
    CHANNEL_PATTERN: "must start with a letter or '_' and hold only letters, digits and '_' "
    "(at most 64)",
}


def _suggest(unknown: str, loc: Loc) -> str | None:
    """The closest field name at ``loc``, else the closest field path anywhere in the spec."""
    close = difflib.get_close_matches(unknown, _fields_at(loc), n=1, cutoff=0.6)
    if close:
        return close[0]
    paths = _all_field_paths()
    leaves: dict[str, str] = {}
    for path in sorted(paths, key=lambda p: p.count(".")):  # the shallowest home of each name
        leaves.setdefault(path.rsplit(".", 1)[-1], path)
    close = difflib.get_close_matches(unknown, list(leaves), n=1, cutoff=0.7)
    return leaves[close[0]] if close else None


def misspelled_fields(details: list[ErrorDetails]) -> set[Loc]:
    """Locations of missing fields that an unknown key next to them most likely meant."""
    meant: set[Loc] = set()
    for detail in details:
        if detail["type"] == "extra_forbidden":
            loc = tuple(detail["loc"])
            close = difflib.get_close_matches(str(loc[-1]), _fields_at(loc[:-1]), n=1, cutoff=0.6)
            if close:
                meant.add((*loc[:-1], close[0]))
    return meant


def report_validation(detail: ErrorDetails, problems: Problems) -> None:
    loc = tuple(detail["loc"])
    kind = detail["type"]
    error = (detail.get("ctx") or {}).get("error")
    if isinstance(error, SpecRuleErrors):
        for rule_loc, message in error.problems:
            problems.add((*loc, *rule_loc), message, at_key=True)
        return
    if kind == "extra_forbidden":
        unknown = str(loc[-1])
        message = f"unknown key {unknown!r}"
        suggestion = _suggest(unknown, loc[:-1])
        choices = _fields_at(loc[:-1])
        if suggestion and suggestion.rsplit(".", 1)[-1] == unknown:
            # The key exists, elsewhere: proposing the word itself would say nothing.
            home = suggestion.rsplit(".", 1)[0] if "." in suggestion else "the top level"
            message += f" here; {unknown!r} is a key of {home}"
            if choices:
                message += f"; {dotted(loc[:-1])} takes: {', '.join(choices)}"
        elif suggestion:
            message += f"; did you mean {suggestion!r}?"
        elif choices:
            message += f"; expected one of: {', '.join(choices)}"
        problems.add(loc, message, at_key=True)
        return
    if kind == "missing":
        problems.add(loc, f"missing required key {str(loc[-1])!r}")
        return
    scalar_union = bool(loc) and loc[-1] in _SCALAR_TAGS
    if scalar_union:
        loc = loc[:-1]  # one value failed every member of the Scalar union: say it once
    if detail["input"] is None:  # ``key:`` with nothing after it, or an explicit null
        problems.add(loc, "has no value: write one, or remove the key")
        return
    if scalar_union:
        problems.add(loc, "must be a string, a number or a boolean")
        return
    message = str(detail["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    if kind == "string_pattern_mismatch":
        pattern = str((detail.get("ctx") or {}).get("pattern", ""))
        message = _PATTERN_TEXT.get(pattern, message)
    message = message.replace("Input should be", "must be").replace("valid tuple", "list")
    if kind.endswith(("_type", "_parsing", "_mismatch")):
        message += f" (got {detail['input']!r})"
    # A failed model-level rule (loc = the model) is best shown at the model's key.
    problems.add(loc, message, at_key=kind == "value_error" and _is_model_loc(loc))


def _is_model_loc(loc: Loc) -> bool:
    current: Any = JobSpec
    for part in loc:
        current = _step(current, part)
    return isinstance(current, type) and issubclass(current, BaseModel)


def _all_field_paths() -> list[str]:
    """Every dotted field path of the spec, e.g. ``resources.nodes`` (list items skipped)."""
    paths: list[str] = []

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, field in model.model_fields.items():
            path = f"{prefix}{name}"
            paths.append(path)
            inner = _unwrap(field.annotation)
            if typing.get_origin(inner) in (tuple, list):
                inner = _unwrap(typing.get_args(inner)[0])
            if isinstance(inner, type) and issubclass(inner, BaseModel):
                walk(inner, path + ".")

    walk(JobSpec, "")
    return paths


def _fields_at(loc: Loc) -> list[str]:
    """Field names of the model reached by walking ``loc`` from ``JobSpec``."""
    current: Any = JobSpec
    for part in loc:
        current = _step(current, part)
        if current is None:
            return []
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _step(annotation: Any, part: str | int) -> Any:
    annotation = _unwrap(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = annotation.model_fields.get(str(part))
        return _unwrap(field.annotation) if field else None
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (tuple, list) and args:
        return _unwrap(args[0])
    if origin is dict and len(args) == 2:
        return _unwrap(args[1])
    return None


def _unwrap(annotation: Any) -> Any:
    """Strip ``Optional``/``Annotated`` to the one model type inside, if there is one."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
            continue
        if origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(members) == 1:
                annotation = members[0]
                continue
        return annotation
