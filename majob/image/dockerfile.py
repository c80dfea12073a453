"""Read a Dockerfile into its instructions, refusing what Docker's own parser refuses.

The Dockerfile is read by dockerfile-parse (a maintained parser, the ``image`` extra). It is
lenient: it drops a dangling ``\\`` continuation and accepts any word as an instruction, so
:func:`parse_dockerfile` adds the checks Docker's own parser makes and reports the first as a
``DockerfileSyntaxError`` naming the line.
"""

from __future__ import annotations

import io
import re
import shlex
from dataclasses import dataclass
from typing import Any, NoReturn

from majob.errors import UserInputError

INSTRUCTIONS = frozenset(
    {
        *("FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY"),
        *("ENTRYPOINT", "VOLUME", "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL"),
        *("HEALTHCHECK", "SHELL"),
    }
)
_KEY_VALUE = frozenset({"ENV", "ARG", "LABEL"})


class DockerfileSyntaxError(UserInputError):
    """The Dockerfile cannot be read as one."""


@dataclass(frozen=True)
class Instruction:
    name: str  # upper case
    line: int  # 1-based first line
    value: str  # continuations joined


def parse_dockerfile(text: str, path: str = "Dockerfile") -> list[Instruction]:
    """The instructions of ``text`` (comments left out); ``DockerfileSyntaxError`` if malformed."""
    try:
        from dockerfile_parse import DockerfileParser
    except ImportError:
        raise UserInputError(
            "majob image lint needs dockerfile-parse", hint="pip install 'majob[image]'"
        ) from None
    parser = DockerfileParser(fileobj=io.BytesIO(text.encode()))
    structure: list[dict[str, Any]] = parser.structure
    covered: set[int] = set()
    instructions: list[Instruction] = []
    for item in structure:
        covered.update(range(item["startline"], item["endline"] + 1))
        if item["instruction"] == "COMMENT":
            continue
        instructions.append(
            Instruction(item["instruction"].upper(), item["startline"] + 1, item["value"])
        )
    for number, raw in enumerate(text.splitlines()):
        stripped = raw.strip()
        if number not in covered and stripped and not stripped.startswith("#"):
            _syntax(
                path,
                number + 1,
                f"{stripped!r} belongs to no instruction",
                "a '\\' continuation at the end of the file? remove it or finish the instruction",
            )
    for ins in instructions:
        _check_instruction(ins, path)
    first = next((i for i in instructions if i.name != "ARG"), None)
    if first is None or first.name != "FROM":
        where = first.line if first else 1
        _syntax(path, where, "a Dockerfile starts with FROM (only ARG may come before it)", None)
    return instructions


def _syntax(path: str, line: int, message: str, hint: str | None) -> NoReturn:
    raise DockerfileSyntaxError(f"{path}:{line}: {message}", hint=hint)


def _check_instruction(ins: Instruction, path: str) -> None:
    if ins.name not in INSTRUCTIONS:
        _syntax(
            path,
            ins.line,
            f"unknown instruction {ins.name!r}",
            "Docker knows " + ", ".join(sorted(INSTRUCTIONS)),
        )
    if not ins.value.strip():
        _syntax(path, ins.line, f"{ins.name} needs an argument", None)
    if ins.name in ("RUN", "COPY", "ADD") and re.search(r"<<-?\s*['\"]?[A-Za-z_]+", ins.value):
        _syntax(
            path,
            ins.line,
            "heredocs (<<EOF) are not read by the parser majob uses",
            "write the commands on one RUN joined with && and '\\' continuations",
        )
    if ins.name in _KEY_VALUE:
        try:
            words = shlex.split(ins.value, posix=True)
        except ValueError as error:
            _syntax(path, ins.line, f"{ins.name}: {error} (an unclosed quote?)", None)
        if ins.name == "ENV" and len(words) == 1 and "=" not in words[0]:
            _syntax(path, ins.line, f"ENV {words[0]} has no value", f"write ENV {words[0]}=VALUE")
