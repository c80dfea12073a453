"""``${VAR}`` references to the user's environment inside a spec, and where their values go.

Every string value may say ``${VAR}``; an unset variable is an error naming it. ``$${VAR}`` is a
literal ``${VAR}``. ``image.command`` is left alone: it is a shell command that the training
container expands at run time (``${MA_JOB_DIR}`` and friends exist only there).

A value filled from the environment into what the job receives (a hyperparameter or an ``env``
variable, of the spec or of a stage) is how a spec passes a token without writing it down, so
majob treats it as a secret: the loader keeps the names of those fields, the values and the
references as written (``FromEnviron``). Whatever majob prints or writes (run records, node logs,
dry runs, compiled bodies) goes through a ``majob.masking.Masker`` that shows ``***`` instead, and
what it stores and digests (the ledger's spec, the gate's spec digest) holds the reference
(``${TOKEN}``), never the value: rotating a token changes no digest. Paths, names and OBS
locations filled from the environment are not secrets and stay readable (and digested).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from majob.masking import Masker
from majob.spec.positions import Loc

_REF = re.compile(r"\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)\}")
CONTAINER_EXPANDED: tuple[tuple[str | int, ...], ...] = (("image", "command"),)
# The fields whose values reach the job: (kind, name) with kind "hyperparameters" or "env".
_JOB_VALUE_KINDS = ("hyperparameters", "env")


@dataclass(frozen=True)
class FromEnviron:
    """What a spec took from the environment into the job: ``fields`` as ``(kind, name)``
    (``("hyperparameters", "token")``, ``("env", "API_KEY")``, stage overrides included), the
    ``values`` themselves, and ``references``: each such field's location and its text as
    written (``(("env", "API_KEY"), "${KEY}")``, ``(("stages", "debug", "env", "X"), ...)``)."""

    fields: frozenset[tuple[str, str]] = field(default_factory=frozenset)
    values: frozenset[str] = field(default_factory=frozenset)
    references: tuple[tuple[Loc, str], ...] = ()

    def masks(self, kind: str, name: str) -> bool:
        return (kind, name) in self.fields

    def masker(self) -> Masker:
        return Masker(self.values)

    def at_stage(self, stage: str, overridden: Iterable[tuple[str, str]]) -> FromEnviron:
        """The references once ``stage``'s overrides are merged into the spec: a field the
        stage sets (``overridden``, as ``(kind, name)``) holds the stage's reference, or none."""
        replaced = set(overridden)
        merged = [
            (loc, text)
            for loc, text in self.references
            if len(loc) != 2 or (str(loc[0]), str(loc[1])) not in replaced
        ]
        merged += [
            ((loc[2], loc[3]), text)
            for loc, text in self.references
            if len(loc) == 4 and loc[1] == stage
        ]
        return replace(self, references=tuple(merged))


def _job_field(loc: Loc) -> tuple[str, str] | None:
    """``(kind, name)`` when ``loc`` is a hyperparameter or env entry (of a stage, too)."""
    if len(loc) == 2 and loc[0] in _JOB_VALUE_KINDS:
        return str(loc[0]), str(loc[1])
    if len(loc) == 4 and loc[0] == "stages" and loc[2] in _JOB_VALUE_KINDS:
        return str(loc[2]), str(loc[3])
    return None


@dataclass
class Origin:
    """What ``expand_refs`` filled in: ``values`` as ``(loc, value)`` for every variable, and
    ``written``: each string that held a reference, as written, by its location."""

    values: set[tuple[Loc, str]] = field(default_factory=set)
    written: dict[Loc, str] = field(default_factory=dict)

    def forget_below(self, loc: Loc) -> None:
        """``loc`` was replaced (a ``--set`` override): what is there now is not a reference."""
        for place in [p for p in self.written if p[: len(loc)] == loc]:
            del self.written[place]


def expand_refs(
    node: Any, environ: Mapping[str, str], loc: Loc = (), origin: Origin | None = None
) -> tuple[Any, list[tuple[Loc, str]]]:
    """``node`` with ``${VAR}`` replaced; and the ``(loc, message)`` of every unset variable.
    ``origin``, when given, receives every value a variable filled in and where."""
    problems: list[tuple[Loc, str]] = []
    if loc in CONTAINER_EXPANDED:
        return node, problems
    if isinstance(node, dict):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            out[key], found = expand_refs(value, environ, (*loc, key), origin)
            problems += found
        return out, problems
    if isinstance(node, list):
        items = []
        for index, value in enumerate(node):
            item, found = expand_refs(value, environ, (*loc, index), origin)
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
        if origin is not None:
            origin.values.add((loc, environ[name]))
            origin.written[loc] = node
        return environ[name]

    return _REF.sub(replace, node), problems


def from_environ(origin: Origin) -> FromEnviron:
    """The ``FromEnviron`` of the values ``expand_refs`` filled in (only the job's fields)."""
    fields, values = set(), set()
    for loc, value in origin.values:
        job_field = _job_field(loc)
        if job_field is not None and value:
            fields.add(job_field)
            values.add(value)
    references = sorted(
        ((loc, text) for loc, text in origin.written.items() if _job_field(loc) is not None),
        key=lambda item: tuple(map(str, item[0])),
    )
    return FromEnviron(frozenset(fields), frozenset(values), tuple(references))
