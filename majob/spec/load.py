"""Load a job spec from YAML: every problem at once, each at ``file:line:col``.

The steps, in order: read and parse as untrusted input (``majob.spec.safe_yaml``: at most 1 MiB,
UTF-8 only, core-schema tags only, aliases limited, positions kept), expand ``${VAR}`` references,
apply ``--set path=value`` overrides, fill defaults from the selected profile, resolve relative
paths against the spec file's directory, validate with the pydantic models, then check that the
local files the spec names exist. Problems from every step are gathered and raised together as
one ``SpecError``.
"""

from __future__ import annotations

import difflib
import os
import types
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from majob.errors import SpecError, SpecProblem
from majob.spec.envrefs import Origin, expand_refs, from_environ
from majob.spec.fields import CHANNEL_PATTERN, NAME_PATTERN
from majob.spec.models import JobSpec
from majob.spec.positions import Loc, Positions, Where
from majob.spec.profiles import Profile, load_profile
from majob.spec.rules import SpecRuleErrors
from majob.spec.safe_yaml import (
    MAX_DEPTH,
    Document,
    YamlProblem,
    YamlRefused,
    compose,
    read_text,
    to_plain,
)

_SCALAR_TAGS = {"bool", "int", "float", "str"}


class _Problems:
    """Collects problems and locates them through the positions map."""

    def __init__(self, positions: Positions) -> None:
        self.positions = positions
        self.items: list[SpecProblem] = []

    def add(self, loc: Loc, message: str, *, at_key: bool = False) -> None:
        path = _dotted(loc)
        if any(p.path == path for p in self.items if p.message != message):
            return  # one problem per field: the first cause (e.g. an unset ${VAR}) is the one
        file, line, col = self.positions.find(loc, key=at_key)
        self.items.append(SpecProblem(file, line, col, path, message))

    def error(self) -> SpecError:
        return SpecError(list(dict.fromkeys(self.items)))

    def raise_if_any(self) -> None:
        if self.items:
            raise self.error()


def _dotted(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def load_spec(
    path: str | os.PathLike[str],
    *,
    overrides: Sequence[str] = (),
    profile: str | Profile | None = None,
    environ: Mapping[str, str] | None = None,
    check_files: bool | Literal["code_dir"] = True,
    local_inputs: Mapping[str, str | os.PathLike[str]] | None = None,
) -> JobSpec:
    """Read, override, validate and return the spec at ``path``; raise ``SpecError`` with every
    problem found (or ``ConfigError`` for a bad profile). ``local_inputs`` (``--input
    NAME=PATH``, a relative PATH read from the current directory) replace the named inputs'
    ``local`` before anything is checked: a stand-in given on the command line rescues a spec
    whose own ``local`` does not exist here. ``check_files="code_dir"`` checks only that the
    code directory exists: ``majob submit`` checks the boot file and the stand-ins it needs in
    its pre-flight, which reports every problem at once."""
    env = os.environ if environ is None else environ
    selected = profile if isinstance(profile, Profile) else load_profile(profile, env)
    label = str(path)
    positions = Positions(label)
    problems = _Problems(positions)
    data = _parse(Path(path), label, positions, problems)
    problems.raise_if_any()

    origin = Origin()
    data, unset = expand_refs(data, env, origin=origin)
    for loc, message in unset:
        problems.add(loc, message)
    for text in overrides:
        replaced = _apply_override(data, text, positions, problems)
        if replaced is not None:
            origin.forget_below(replaced)
    _apply_profile(data, selected)
    _resolve_paths(data, Path(path).resolve().parent)
    _apply_local_inputs(data, local_inputs or {}, positions, problems)

    validated = _validate(data)
    if not isinstance(validated, JobSpec):
        misspelled = _misspelled_fields(validated)
        for detail in validated:
            if detail["type"] == "missing" and tuple(detail["loc"]) in misspelled:
                continue  # already said: "unknown key 'bootfile'; did you mean 'boot_file'?"
            _report_validation(detail, problems)
        # Raised here, outside any ``except``: pydantic's error must not ride along as context.
        raise problems.error()
    spec = validated
    if check_files:
        _check_files(spec, problems, only_code_dir=check_files == "code_dir")
    problems.raise_if_any()
    return spec.with_from_environ(from_environ(origin))


def _validate(data: dict[str, Any]) -> JobSpec | list[ErrorDetails]:
    """The spec, or pydantic's error details (the exception itself stays in here)."""
    try:
        return JobSpec.model_validate(data)
    except ValidationError as error:
        return error.errors()


# -- parsing ---------------------------------------------------------------------------------


def _parse(path: Path, label: str, positions: Positions, problems: _Problems) -> dict[str, Any]:
    try:
        text = read_text(path)
    except YamlRefused as refused:
        problems.items.append(_spec_problem(label, refused.problem))
        return {}
    try:
        document = _compose(text)
    except YamlRefused as refused:
        problems.items.append(_spec_problem(label, refused.problem))
        return {}
    if document is None:
        problems.items.append(SpecProblem(label, 1, 1, "", "the file is empty: write a job spec"))
        return {}
    plain, found = to_plain(document, positions, text)
    problems.items.extend(_spec_problem(label, problem) for problem in found)
    if found:
        return {}
    if not isinstance(plain, dict):
        problems.items.append(
            SpecProblem(label, 1, 1, "", "a job spec is a mapping (name:, code:, image:, ...)")
        )
        return {}
    return plain


def _compose(text: str) -> Document | None:
    """``compose(text)``, its syntax errors turned into a ``YamlRefused`` at their line:col."""
    from ruamel.yaml.composer import MaxDepthExceededError
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        return compose(text)
    except MaxDepthExceededError as error:
        mark = error.problem_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = f"nested more than {MAX_DEPTH} levels deep"
        raise YamlRefused(YamlProblem(line, col, message)) from None
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        reason = " ".join(str(error.problem or error.context or "invalid YAML").split())
        if error.context and error.problem and error.context not in reason:
            reason = f"{' '.join(str(error.context).split())}: {reason}"
        raise YamlRefused(YamlProblem(line, col, f"YAML syntax error: {reason}")) from None
    except YAMLError as error:
        reason = " ".join(str(error).split())
        raise YamlRefused(YamlProblem(1, 1, f"YAML error: {reason}")) from None


def _spec_problem(label: str, problem: YamlProblem) -> SpecProblem:
    return SpecProblem(label, problem.line, problem.col, _dotted(problem.loc), problem.message)


# -- --set overrides ---------------------------------------------------------------------------


def parse_override(text: str) -> tuple[list[str], Any]:
    """Split ``a.b[0].c=value`` into path parts and the value parsed as YAML (the same safe
    reading as a spec file: core tags only, aliases limited)."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise ValueError("expected PATH=VALUE, e.g. resources.nodes=2")
    parts = [p for p in key.strip().replace("[", ".").replace("]", "").split(".")]
    if any(not p for p in parts):
        raise ValueError(f"path {key.strip()!r} has an empty part")
    if raw.strip() == "":
        return parts, ""
    try:
        node = _compose(raw)
    except YamlRefused as refused:
        raise ValueError(f"value {raw!r} is not valid YAML: {refused.problem.message}") from None
    if node is None:
        return parts, None
    value, found = to_plain(node, Positions("--set"), raw)
    if found:
        raise ValueError(f"value {raw!r}: {found[0].message}")
    return parts, value


def _apply_override(
    data: dict[str, Any], text: str, positions: Positions, problems: _Problems
) -> Loc | None:
    """Apply one ``--set``; the location it replaced (None when it was refused)."""
    label = f"--set '{text}'"

    def refuse(loc: Loc, message: str) -> None:
        problems.items.append(SpecProblem(label, 0, 0, _dotted(loc), message))

    try:
        parts, value = parse_override(text)
    except ValueError as error:
        refuse((), str(error))
        return None
    node: Any = data
    loc: list[str | int] = []
    for index, part in enumerate(parts):
        step: str | int = part
        if isinstance(node, list):
            position = _list_position(node, part)
            if position is None:
                choices = f"an index 0..{len(node) - 1} or " if node else ""
                named = int(part) if part.lstrip("-").isdigit() else part
                refuse((*loc, named), f"no item {part!r}: use {choices}an item's name")
                return None
            step = position
        loc.append(step)
        container: Any = node
        if index == len(parts) - 1:
            container[step] = value
            break
        child = container.get(step) if isinstance(container, dict) else container[step]
        if child is None:  # absent or empty: the override creates it
            child = container[step] = {}
        elif not isinstance(child, (dict, list)):
            rest = ".".join(parts[index + 1 :])
            refuse(
                tuple(loc),
                f"is a single value ({child!r}), so it has no {rest!r}; "
                f"set {_dotted(tuple(loc))}=VALUE instead",
            )
            return None
        node = child
    where = Where(label, (0, 0), (0, 0))
    positions.drop_below(tuple(loc))
    positions.set(tuple(loc), where)
    return tuple(loc)


def _list_position(items: list[Any], part: str) -> int | None:
    if part.lstrip("-").isdigit():
        position = int(part)
        return position if 0 <= position < len(items) else None
    for position, item in enumerate(items):
        if isinstance(item, dict) and item.get("name") == part:
            return position
    return None


# -- profile defaults and paths ----------------------------------------------------------------


def _apply_profile(data: dict[str, Any], profile: Profile) -> None:
    resources = data.get("resources")
    if profile.flavor and (resources is None or isinstance(resources, dict)):
        resources = resources if resources is not None else {}
        resources.setdefault("flavor", profile.flavor)
        data["resources"] = resources
    code = data.get("code")
    name = data.get("name")
    if profile.bucket and isinstance(code, dict) and "obs" not in code and isinstance(name, str):
        code_dir = code.get("dir", ".")
        dir_name = Path(str(code_dir)).name or "code"
        code["obs"] = f"obs://{profile.bucket}/majob/{name}/{dir_name}/"


def _resolve_paths(data: dict[str, Any], base: Path) -> None:
    code = data.get("code")
    if isinstance(code, dict):
        code_dir = code.get("dir", ".")
        if isinstance(code_dir, str):
            code["dir"] = str((base / code_dir).resolve())
    for kind in ("inputs", "outputs"):
        channels = data.get(kind)
        if not isinstance(channels, list):
            continue
        for channel in channels:
            if isinstance(channel, dict) and isinstance(channel.get("local"), str):
                channel["local"] = str((base / os.path.expanduser(channel["local"])).resolve())


def _apply_local_inputs(
    data: dict[str, Any],
    local_inputs: Mapping[str, str | os.PathLike[str]],
    positions: Positions,
    problems: _Problems,
) -> None:
    channels = data.get("inputs")
    items = channels if isinstance(channels, list) else []
    for name, local in local_inputs.items():
        label = f"--input {name}={os.fspath(local)}"
        index = _list_position(items, name) if not name.lstrip("-").isdigit() else None
        if index is None:
            known = [str(c.get("name")) for c in items if isinstance(c, dict)]
            problems.items.append(
                SpecProblem(
                    label,
                    0,
                    0,
                    "",
                    f"the spec has no input named {name!r} (inputs: {', '.join(known) or 'none'})",
                )
            )
            continue
        items[index]["local"] = str(Path(local).expanduser().resolve())
        loc: Loc = ("inputs", index, "local")
        positions.drop_below(loc)
        positions.set(loc, Where(label, (0, 0), (0, 0)))


# -- validation errors -------------------------------------------------------------------------


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
    leaves = {path.rsplit(".", 1)[-1]: path for path in reversed(paths)}
    close = difflib.get_close_matches(unknown, list(leaves), n=1, cutoff=0.7)
    return leaves[close[0]] if close else None


def _misspelled_fields(details: list[ErrorDetails]) -> set[Loc]:
    """Locations of missing fields that an unknown key next to them most likely meant."""
    meant: set[Loc] = set()
    for detail in details:
        if detail["type"] == "extra_forbidden":
            loc = tuple(detail["loc"])
            close = difflib.get_close_matches(str(loc[-1]), _fields_at(loc[:-1]), n=1, cutoff=0.6)
            if close:
                meant.add((*loc[:-1], close[0]))
    return meant


def _report_validation(detail: ErrorDetails, problems: _Problems) -> None:
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
        if suggestion:
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


# -- local files -------------------------------------------------------------------------------


def _check_files(spec: JobSpec, problems: _Problems, *, only_code_dir: bool = False) -> None:
    code_dir = Path(spec.code.dir)
    if not code_dir.is_dir():
        problems.add(("code", "dir"), f"code directory {display_path(code_dir)} does not exist")
    if only_code_dir:
        return
    if code_dir.is_dir() and not (code_dir / spec.code.boot_file).is_file():
        problems.add(
            ("code", "boot_file"),
            f"boot file {spec.code.boot_file!r} is not in {display_path(code_dir)}",
        )
    for index, channel in enumerate(spec.inputs):
        if channel.local is not None and not Path(channel.local).exists():
            problems.add(
                ("inputs", index, "local"),
                f"local stand-in {display_path(Path(channel.local))} does not exist",
            )


def display_path(path: Path) -> str:
    """``path`` relative to the current directory when it is below it, else absolute."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
