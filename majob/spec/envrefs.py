"""``${VAR}`` references to the user's environment inside a spec.

Every string value may say ``${VAR}``; an unset variable is an error naming it. ``$${VAR}`` is a
literal ``${VAR}``. ``image.command`` is left alone: it is a shell command that the training
container expands at run time (``${MA_JOB_DIR}`` and friends exist only there).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from majob.spec.positions import Loc

_REF = re.compile(r"\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)\}")
CONTAINER_EXPANDED: tuple[Loc, ...] = (("image", "command"),)


def expand_refs(
    node: Any, environ: Mapping[str, str], loc: Loc = ()
) -> tuple[Any, list[tuple[Loc, str]]]:
    """``node`` with ``${VAR}`` replaced; and the ``(loc, message)`` of every unset variable."""
    problems: list[tuple[Loc, str]] = []
    if loc in CONTAINER_EXPANDED:
        return node, problems
    if isinstance(node, dict):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            out[key], found = expand_refs(value, environ, (*loc, key))
            problems += found
        return out, problems
    if isinstance(node, list):
        items = []
        for index, value in enumerate(node):
            item, found = expand_refs(value, environ, (*loc, index))
            items.append(item)
            problems += found
        return items, problems
    if not isinstance(node, str) or "$" not in node:
        return node, problems

    def replace(match: re.Match[str]) -> str:
        escaped, name = match.group(1), match.group(2)
        if escaped:
            return "${" + name + "}"
        if name not in environ:
            problems.append(
                (
                    loc,
                    f"environment variable {name} is not set (export it, or write $${{{name}}} "
                    "for a literal)",
                )
            )
            return match.group(0)
        return environ[name]

    return _REF.sub(replace, node), problems
