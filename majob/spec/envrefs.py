"""``${VAR}`` references to the user's environment inside a spec, and where their values go.

Every string value may say ``${VAR}``; an unset variable is an error naming it. ``$${VAR}`` is a
literal ``${VAR}``. ``image.command`` is left alone: it is a shell command that the training
container expands at run time (``${MA_JOB_DIR}`` and friends exist only there).

A value filled from the environment into what the job receives (a hyperparameter or an ``env``
variable, of the spec or of a stage) is how a spec passes a token without writing it down, so
majob treats it as a secret: the loader keeps the names of those fields and the values
(``FromEnviron``), and whatever majob writes (run records, node logs, the lines it prints) goes
through a ``Redactor`` that shows ``***`` instead. Paths, names and OBS locations filled from the
environment are not secrets and stay readable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # positions imports ruamel.yaml; the models (and so the compilers) import this
    from majob.spec.positions import Loc

_REF = re.compile(r"\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)\}")
CONTAINER_EXPANDED: tuple[tuple[str | int, ...], ...] = (("image", "command"),)
# The fields whose values reach the job: (kind, name) with kind "hyperparameters" or "env".
_JOB_VALUE_KINDS = ("hyperparameters", "env")
MASK = "***"
# Shorter values are masked where majob writes them field by field (argv, records) but not in
# free text such as log lines: masking every "10" or "0.1" would garble the log.
MIN_MASKED_TEXT = 4


@dataclass(frozen=True)
class FromEnviron:
    """What a spec took from the environment into the job: ``fields`` as ``(kind, name)``
    (``("hyperparameters", "token")``, ``("env", "API_KEY")``, stage overrides included) and
    the ``values`` themselves."""

    fields: frozenset[tuple[str, str]] = field(default_factory=frozenset)
    values: frozenset[str] = field(default_factory=frozenset)

    def masks(self, kind: str, name: str) -> bool:
        return (kind, name) in self.fields


def _job_field(loc: Loc) -> tuple[str, str] | None:
    """``(kind, name)`` when ``loc`` is a hyperparameter or env entry (of a stage, too)."""
    if len(loc) == 2 and loc[0] in _JOB_VALUE_KINDS:
        return str(loc[0]), str(loc[1])
    if len(loc) == 4 and loc[0] == "stages" and loc[2] in _JOB_VALUE_KINDS:
        return str(loc[2]), str(loc[3])
    return None


def expand_refs(
    node: Any, environ: Mapping[str, str], loc: Loc = (), origin: set[tuple[Loc, str]] | None = None
) -> tuple[Any, list[tuple[Loc, str]]]:
    """``node`` with ``${VAR}`` replaced; and the ``(loc, message)`` of every unset variable.
    ``origin``, when given, receives ``(loc, value)`` for every value a variable filled in."""
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
            origin.add((loc, environ[name]))
        return environ[name]

    return _REF.sub(replace, node), problems


def from_environ(origin: Iterable[tuple[Loc, str]]) -> FromEnviron:
    """The ``FromEnviron`` of the values ``expand_refs`` filled in (only the job's fields)."""
    fields, values = set(), set()
    for loc, value in origin:
        job_field = _job_field(loc)
        if job_field is not None and value:
            fields.add(job_field)
            values.add(value)
    return FromEnviron(frozenset(fields), frozenset(values))


class Redactor:
    """Shows ``***`` for the values of a ``FromEnviron`` in text majob writes."""

    def __init__(self, secrets: FromEnviron | None = None) -> None:
        self.secrets = secrets or FromEnviron()
        # Longest first: a value that contains another is masked whole.
        self._texts = sorted(
            (v for v in self.secrets.values if len(v) >= MIN_MASKED_TEXT), key=len, reverse=True
        )
        self._bytes = [v.encode("utf-8") for v in self._texts]

    def __bool__(self) -> bool:
        return bool(self.secrets.values)

    def text(self, text: str) -> str:
        for value in self._texts:
            text = text.replace(value, MASK)
        return text

    def raw(self, data: bytes) -> bytes:
        """``text`` for a line of a node's output, as it came from the pipe."""
        for value in self._bytes:
            data = data.replace(value, MASK.encode())
        return data
