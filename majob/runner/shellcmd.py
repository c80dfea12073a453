"""A custom image's boot command, made to run on this machine by ``/bin/sh -c`` as the image's
shell would run it in the container.

The shell does every expansion itself, with the node's environment: majob never pastes a value
into the command text (a value holding ``;`` stays a value, ``$PATH`` and ``$HOME`` stay this
machine's, ``'$X'`` stays literal). Only three things are rewritten, each in the quoting context
it appears in (unquoted, ``"..."``, ``'...'``, `` `...` `` or ``$(...)``):

- a literal ``/home/ma-user`` path becomes the run's root, quoted so that a root holding a space
  or a quote is still one word inside whatever quotes surround it;
- an unquoted ``$VAR``/``${VAR}`` naming a container path (``MA_JOB_DIR``, ``WORKSPACE``...)
  becomes ``"${VAR}"``: in the container these hold no space, so the shell never splits them,
  and quoting keeps it so when the run's root has one;
- an unquoted word naming a Python interpreter (``python``, ``python3``, ``python3.9``, bare or
  by path) becomes the configured interpreter.

The scanner knows POSIX quoting, not the whole grammar: ``${VAR:-word}`` and the like are copied
as they are (a ``/home/ma-user`` inside one is not moved), and here-documents cannot occur (the
command is one line).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import PurePath

from majob import container

_HOME = str(container.HOME)
# /home/ma-user as a path of its own (not the tail of /x/home/ma-user, not /home/ma-user2).
_HOME_REF = re.compile(r"(?<![\w.-])" + re.escape(_HOME) + r"(?![\w.-])")
_PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)?)?$")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OPERATORS = frozenset(";&|()<>")
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_./+:@%,=-]+")


@dataclass
class _Frame:
    """A quoting context: ``top`` (unquoted, also inside ``$(...)``), ``dq`` (``"..."``) or
    ``bq`` (`` `...` ``)."""

    kind: str
    depth: int = 0  # open parentheses of a ``$(`` frame; 0 for the others
    word_start: int | None = None  # where the current unquoted word starts in the output
    word_raw: list[str] = field(default_factory=list)  # its source text, while it is plain
    plain: bool = True


class _Rewriter:
    def __init__(self, text: str, root: PurePath, python: str, path_vars: Collection[str]):
        self.text = text
        self.root = str(root)
        self.quoted_root = shlex.quote(self.root)
        self.python = python
        self.path_vars = frozenset(path_vars)
        self.out: list[str] = []
        self.stack: list[_Frame] = [_Frame("top")]

    # -- output helpers ------------------------------------------------------------------------

    def root_in(self, kind: str) -> str:
        """The run's root as it must be written inside quoting context ``kind``."""
        if self.quoted_root == self.root or kind not in ("dq", "sq"):
            return self.quoted_root
        # Close the quotes, add the quoted root, reopen: the shell joins the pieces in one word.
        mark = '"' if kind == "dq" else "'"
        return mark + self.quoted_root + mark

    def emit(self, piece: str, raw: str | None = None) -> None:
        """Output ``piece``; in an unquoted context it belongs to the current word."""
        frame = self.stack[-1]
        if frame.kind != "dq":
            if frame.word_start is None:
                frame.word_start = len(self.out)
            if raw is None:
                frame.plain = False
            elif frame.plain:
                frame.word_raw.append(raw)
        self.out.append(piece)

    def end_word(self) -> None:
        frame = self.stack[-1]
        if frame.word_start is not None and frame.plain:
            word = "".join(frame.word_raw)
            if _PLAIN_WORD.fullmatch(word) and _PYTHON_NAME.match(word.rsplit("/", 1)[-1]):
                self.out[frame.word_start :] = [shlex.quote(self.python)]
        frame.word_start, frame.word_raw, frame.plain = None, [], True

    # -- the scan ------------------------------------------------------------------------------

    def run(self) -> str:
        text, i = self.text, 0
        while i < len(text):
            kind = self.stack[-1].kind
            i = self.step_dq(i) if kind == "dq" else self.step_unquoted(i)
        while self.stack:  # an unterminated quote: the shell will say so; copy it as it is
            self.end_word()
            self.stack.pop()
        return "".join(self.out)

    def home_at(self, i: int) -> bool:
        return _HOME_REF.match(self.text, i) is not None

    def step_unquoted(self, i: int) -> int:
        text, frame = self.text, self.stack[-1]
        char = text[i]
        if char.isspace() or char in _OPERATORS:
            self.end_word()
            if char == "(" and frame.depth:
                frame.depth += 1
            elif char == ")" and frame.depth:
                frame.depth -= 1
                if frame.depth == 0:  # the end of a $( ... )
                    self.stack.pop()
                    self.emit(")")
                    return i + 1
            self.out.append(char)
            return i + 1
        if char == "#" and frame.word_start is None and len(self.stack) == 1:
            self.out.append(text[i:])  # a comment runs to the end of the line
            return len(text)
        if char == "`" and frame.kind == "bq":
            self.end_word()
            self.stack.pop()
            self.emit("`")
            return i + 1
        return self.step_common(i, "top")

    def step_dq(self, i: int) -> int:
        char = self.text[i]
        if char == '"':
            self.stack.pop()
            self.emit('"')
            return i + 1
        return self.step_common(i, "dq")

    def step_common(self, i: int, kind: str) -> int:
        """What unquoted text and double-quoted text share: escapes, ``$``, quotes, the root."""
        text = self.text
        char = text[i]
        if char == "\\":
            self.emit(text[i : i + 2])
            return i + 2
        if char == "'" and kind == "top":
            end = text.find("'", i + 1)
            end = len(text) if end < 0 else end
            inner = _HOME_REF.sub(lambda _: self.root_in("sq"), text[i + 1 : end])
            self.emit("'" + inner + text[end : end + 1])
            return end + 1
        if char == '"' and kind == "top":
            self.emit('"')
            self.stack.append(_Frame("dq"))
            return i + 1
        if char == "`":
            self.emit("`")
            self.stack.append(_Frame("bq"))
            return i + 1
        if char == "$":
            return self.dollar(i, kind)
        if char == "/" and self.home_at(i):
            # Unquoted, the word stays "plain": /home/ma-user/.../python3 is still an interpreter.
            self.emit(self.root_in(kind), raw=_HOME if kind == "top" else None)
            return i + len(_HOME)
        self.emit(char, raw=char)
        return i + 1

    def dollar(self, i: int, kind: str) -> int:
        text = self.text
        if text.startswith("$(", i):
            self.emit("$(")
            self.stack.append(_Frame("top", depth=1))
            return i + 2
        if text.startswith("${", i):
            end = _matching_brace(text, i + 1)
            inner = text[i + 2 : end]
            if kind == "top" and inner in self.path_vars:
                self.emit('"${' + inner + '}"')
            else:
                self.emit(text[i : end + 1])
            return end + 1
        name = _NAME.match(text, i + 1)
        if name is None:
            self.emit("$")
            return i + 1
        if kind == "top" and name.group() in self.path_vars:
            self.emit('"${' + name.group() + '}"')
        else:
            self.emit(text[i : name.end()])
        return name.end()


def _matching_brace(text: str, start: int) -> int:
    """The index of the ``}`` that closes the ``{`` at ``start`` (or the end of the text)."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return len(text) - 1


def container_command(
    command: str, *, root: PurePath, python: str, path_vars: Collection[str] = ()
) -> str:
    """``command`` (a custom image's boot command) as ``/bin/sh -c`` runs it here, with ``root``
    standing for ``/home/ma-user`` and ``python`` for the image's interpreter; ``path_vars`` are
    the container variables that hold a path (see the module's docstring)."""
    return _Rewriter(command, root, python, path_vars).run()
