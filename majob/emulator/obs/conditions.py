"""Conditional requests (RFC 7232, as S3 and OBS apply them to GET and HEAD): ``If-Match`` and
``If-Unmodified-Since`` fail with 412, ``If-None-Match`` and ``If-Modified-Since`` with 304.

As S3: a true ``If-Match`` overrides a false ``If-Unmodified-Since``, and a false
``If-None-Match`` overrides a true ``If-Modified-Since``. Dates that cannot be read are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from email.utils import parsedate_to_datetime

from majob.emulator.obs.errors import ObsServiceError, precondition_failed
from majob.emulator.obs.models import FakeObject


class NotModified(ObsServiceError):
    """A 304: the client's copy is current (no body, but the object's validators)."""

    def __init__(self, obj: FakeObject) -> None:
        super().__init__(304, "NotModified", "Not Modified")
        self.obj = obj


def _etags(header: str) -> set[str]:
    return {tag.strip().removeprefix("W/").strip('"') for tag in header.split(",")}


def _matches(header: str, etag: str) -> bool:
    tags = _etags(header)
    return "*" in tags or etag in tags


def _seconds(header: str | None) -> float | None:
    if not header:
        return None
    try:
        return parsedate_to_datetime(header).timestamp()
    except (TypeError, ValueError):
        return None


def check(headers: Mapping[str, str], obj: FakeObject, prefix: str = "if-") -> None:
    """Raise ``PreconditionFailed`` (412) or ``NotModified`` (304) as the conditions in
    ``headers`` (lower-case names) say; ``prefix`` is ``x-amz-copy-source-if-`` for a copy's
    source, whose failures are all 412."""
    modified = int(obj.last_modified)  # HTTP dates have whole seconds
    if_match = headers.get(f"{prefix}match")
    if if_match is not None:
        if not _matches(if_match, obj.etag):
            raise precondition_failed("If-Match")
    else:
        since = _seconds(headers.get(f"{prefix}unmodified-since"))
        if since is not None and modified > since:
            raise precondition_failed("If-Unmodified-Since")
    not_modified = NotModified(obj) if prefix == "if-" else precondition_failed("If-None-Match")
    if_none_match = headers.get(f"{prefix}none-match")
    if if_none_match is not None:
        if _matches(if_none_match, obj.etag):
            raise not_modified
    else:
        since = _seconds(headers.get(f"{prefix}modified-since"))
        if since is not None and modified <= since:
            raise not_modified
