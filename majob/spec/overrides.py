"""What changes a spec's data between reading and validating it, each change where it was asked
for: ``--set PATH=VALUE`` overrides, ``--input NAME=PATH`` stand-ins, the profile's defaults
(flavor, code bucket) and relative paths resolved against the spec file's directory.

Each works on the plain data (dicts and lists) and records where it wrote a value in the
``Positions`` map, so a problem in an overridden value names the ``--set`` that wrote it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from majob.errors import SpecProblem
from majob.spec.positions import Loc, Positions, Where
from majob.spec.problems import Problems, dotted
from majob.spec.profiles import Profile
from majob.spec.safe_yaml import YamlRefused, compose, to_plain


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
        node = compose(raw)
    except YamlRefused as refused:
        raise ValueError(f"value {raw!r} is not valid YAML: {refused.problem.message}") from None
    if node is None:
        return parts, None
    value, found = to_plain(node, Positions("--set"), raw)
    if found:
        raise ValueError(f"value {raw!r}: {found[0].message}")
    return parts, value


def apply_override(
    data: dict[str, Any], text: str, positions: Positions, problems: Problems
) -> Loc | None:
    """Apply one ``--set``; the location it replaced (None when it was refused)."""
    label = f"--set '{text}'"

    def refuse(loc: Loc, message: str) -> None:
        problems.items.append(SpecProblem(label, 0, 0, dotted(loc), message))

    try:
        parts, value = parse_override(text)
    except ValueError as error:
        refuse((), str(error))
        return None
    node: Any = data
    loc: list[str | int] = []
    created: list[Loc] = []  # keys the override adds: a problem with them is the flag's
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
            created.append(tuple(loc))
        elif not isinstance(child, (dict, list)):
            rest = ".".join(parts[index + 1 :])
            refuse(
                tuple(loc),
                f"is a single value ({child!r}), so it has no {rest!r}; "
                f"set {dotted(tuple(loc))}=VALUE instead",
            )
            return None
        node = child
    where = Where(label, (0, 0), (0, 0))
    positions.drop_below(tuple(loc))
    positions.set(tuple(loc), where)
    for new_key in created:  # e.g. a misspelt `hyperparameter.lr`: its unknown key is the flag's
        positions.set(new_key, where)
    return tuple(loc)


def _list_position(items: list[Any], part: str) -> int | None:
    if part.lstrip("-").isdigit():
        position = int(part)
        return position if 0 <= position < len(items) else None
    for position, item in enumerate(items):
        if isinstance(item, dict) and item.get("name") == part:
            return position
    return None


def apply_profile(data: dict[str, Any], profile: Profile) -> None:
    resources = data.get("resources")
    if profile.flavor and (resources is None or isinstance(resources, dict)):
        resources = resources if resources is not None else {}
        # A spec that names a pool and no flavor runs in a dedicated CPU pool: the profile's
        # default (a public flavor) is not for it.
        if "pool" not in resources:
            resources.setdefault("flavor", profile.flavor)
        data["resources"] = resources
    code = data.get("code")
    name = data.get("name")
    if profile.bucket and isinstance(code, dict) and "obs" not in code and isinstance(name, str):
        code_dir = code.get("dir", ".")
        dir_name = Path(str(code_dir)).name or "code"
        code["obs"] = f"obs://{profile.bucket}/majob/{name}/{dir_name}/"


def resolve_paths(data: dict[str, Any], base: Path) -> None:
    code = data.get("code")
    if isinstance(code, dict):
        code_dir = code.get("dir", ".")
        if isinstance(code_dir, str):
            code["dir"] = str((base / code_dir).resolve())
    for kind in ("inputs", "outputs", "volumes"):
        channels = data.get(kind)
        if not isinstance(channels, list):
            continue
        for channel in channels:
            if isinstance(channel, dict) and isinstance(channel.get("local"), str):
                channel["local"] = str((base / os.path.expanduser(channel["local"])).resolve())


def apply_local_inputs(
    data: dict[str, Any],
    local_inputs: Mapping[str, str | os.PathLike[str]],
    positions: Positions,
    problems: Problems,
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
