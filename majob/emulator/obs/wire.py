"""The OBS wire format the fake OBS speaks: response records, XML writing and reading, times,
query strings, ``Range`` headers and ``aws-chunked`` bodies. Pure helpers, no server state."""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from email.utils import formatdate
from urllib.parse import unquote
from xml.etree import ElementTree

from majob.emulator.obs.errors import ObsServiceError, malformed


@dataclass
class Response:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | Iterable[bytes] = b""
    length: int | None = None  # for streamed bodies


def iso_time(seconds: float) -> str:
    return (
        time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        + f".{int(seconds % 1 * 1000):03d}Z"
    )


def http_time(seconds: float) -> str:
    return formatdate(seconds, usegmt=True)


class Xml:
    """A response document built with ElementTree (so every value is escaped), written the way
    OBS and S3 write theirs: control characters as character references, which a value may
    hold (keys may), though XML 1.0 text may not."""

    def __init__(self, root: str, namespace: str | None) -> None:
        self.root = ElementTree.Element(root, {"xmlns": namespace} if namespace else {})
        self._open = [self.root]

    def leaf(self, name: str, value: object) -> Xml:
        text = str(value).lower() if isinstance(value, bool) else str(value)
        ElementTree.SubElement(self._open[-1], name).text = text
        return self

    def text(self, value: str) -> Xml:
        """Text directly inside the element open now (S3's ``LocationConstraint``)."""
        self._open[-1].text = value
        return self

    def open(self, name: str) -> Xml:
        self._open.append(ElementTree.SubElement(self._open[-1], name))
        return self

    def close(self, name: str) -> Xml:
        closed = self._open.pop()
        assert closed.tag == name, f"closing {name} while {closed.tag} is open"
        return self

    def bytes(self) -> bytes:
        body = ElementTree.tostring(self.root, encoding="unicode")
        body = _CONTROL.sub(lambda match: f"&#{ord(match.group())};", body)
        return ('<?xml version="1.0" encoding="UTF-8"?>' + body).encode("utf-8")


# XML 1.0 cannot hold these raw (and a raw CR reads back as LF): S3 sends references.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0d\x0e-\x1f\x7f]")


def parse_xml(body: bytes) -> ElementTree.Element:
    """A request document, parsed without entity expansion or DTDs (defusedxml): MalformedXML
    when it is not one."""
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import fromstring

    try:
        root: ElementTree.Element = fromstring(body)
    except (ElementTree.ParseError, DefusedXmlException) as error:
        raise malformed() from error
    return root


def split_query(raw: str) -> list[tuple[str, str]]:
    pairs = []
    for item in raw.split("&"):
        if not item:
            continue
        name, _, value = item.partition("=")
        pairs.append((unquote(name), unquote(value)))
    return pairs


class BodyTooShort(Exception):
    """The client closed the connection before sending the whole body."""


def int_arg(args: Mapping[str, str], name: str, default: int | None = None) -> int:
    value = args.get(name)
    if value is None or value == "":
        if default is None:
            raise ObsServiceError(400, "InvalidArgument", f"{name} is required")
        return default
    try:
        return int(value)
    except ValueError as error:
        raise ObsServiceError(
            400, "InvalidArgument", f"{name} must be an integer", ArgumentName=name
        ) from error


def local_name(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def children(node: ElementTree.Element, name: str) -> list[ElementTree.Element]:
    return [child for child in node if local_name(child.tag) == name]


def child_text(node: ElementTree.Element, name: str) -> str | None:
    for child in node:
        if local_name(child.tag) == name:
            return child.text or ""
    return None


def find_text(body: bytes, name: str) -> str | None:
    if not body.strip():
        return None
    root = parse_xml(body)
    for node in root.iter():
        if local_name(node.tag) == name:
            return (node.text or "").strip() or None
    return None


def parse_range(header: str, size: int) -> tuple[int, int] | None:
    """``(first, last)`` of a single ``bytes=`` range; None means "send it all" (as S3 does for
    a syntactically invalid or multi-range header); unsatisfiable ranges are 416."""
    unit, _, spec = header.partition("=")
    if unit.strip() != "bytes" or "," in spec:
        return None
    first_text, _, last_text = spec.strip().partition("-")
    try:
        if first_text == "":
            suffix = int(last_text)
            if suffix == 0:
                raise unsatisfiable(size)
            return max(size - suffix, 0), size - 1
        first = int(first_text)
        last = int(last_text) if last_text else size - 1
    except ValueError:
        return None
    if first >= size:
        raise unsatisfiable(size)
    if first > last:
        return None
    return first, min(last, size - 1)


def unsatisfiable(size: int) -> ObsServiceError:
    return ObsServiceError(
        416,
        "InvalidRange",
        "The requested range is not satisfiable",
        ActualObjectSize=str(size),
    )


def aws_chunked(raw: Iterator[bytes], trailers: dict[str, str] | None = None) -> Iterator[bytes]:
    """Decode an ``aws-chunked`` body (``<hex>[;chunk-signature=..]\\r\\n<data>\\r\\n``..., then
    trailers, which go into ``trailers`` with lower-case names). Chunk signatures are not
    verified."""
    buffer = b""
    source = iter(raw)

    def fill(at_least: int) -> bool:
        nonlocal buffer
        while len(buffer) < at_least:
            more = next(source, None)
            if more is None:
                return False
            buffer += more
        return True

    while True:
        while b"\r\n" not in buffer:
            if not fill(len(buffer) + 1):
                raise BodyTooShort
        line, buffer = buffer.split(b"\r\n", 1)
        size = int(line.split(b";")[0] or b"0", 16)
        if size == 0:
            rest = buffer + b"".join(source)
            for trailer in rest.decode("utf-8", "replace").splitlines():
                name, colon, value = trailer.partition(":")
                if colon and trailers is not None:
                    trailers[name.strip().lower()] = value.strip()
            return
        if not fill(size + 2):
            raise BodyTooShort
        yield buffer[:size]
        buffer = buffer[size + 2 :]


def continuation_token(key: str) -> str:
    """An opaque ListObjectsV2 token (the last key, base64): clients must not parse it."""
    return base64.urlsafe_b64encode(key.encode("utf-8")).decode("ascii")


def parse_continuation_token(token: str) -> str:
    try:
        raw = base64.b64decode(token.encode("ascii"), altchars=b"-_", validate=True)
        return raw.decode("utf-8")
    except (ValueError, UnicodeError) as error:
        raise ObsServiceError(
            400, "InvalidArgument", "The continuation token provided is incorrect"
        ) from error
