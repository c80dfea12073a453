"""The log URL of ``GET .../tasks/{task_id}/logs/url``: signed, and valid for five minutes.

The service answers with an OBS URL its own credentials presigned (the API's example ends in
``?AWSAccessKeyId=...``; reference modelarts.md §2.2: "valid 5 min"). The emulator serves the log
from its control plane and signs the URL the way an OBS V2 query-signed URL is signed:
``AWSAccessKeyId``, ``Expires`` (epoch seconds) and ``Signature`` (base64 HMAC-SHA1 of the
method, the expiry and the resource), with a key of this emulator's own, made when it starts.
A URL with a wrong or missing signature, or past its expiry, is refused with 403 as OBS refuses
it; so is every URL once the emulator that made it has stopped. The ``Content-Type`` the request
asks for (``text/plain`` to preview, ``application/octet-stream`` to download; the API's example
passes it in the query) is signed into the URL as ``response-content-type``, and the log is
served with it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping
from typing import NamedTuple
from urllib.parse import urlencode

VALID_SECONDS = 300
CONTENT_TYPES = ("text/plain", "application/octet-stream")
ACCESS_KEY = "MAJOBLOGURLSIGNER000"  # names the signer; the key itself is never sent


class LogFile(NamedTuple):
    """A log as a signed URL serves it."""

    data: bytes
    content_type: str


class LogUrlRefused(Exception):
    """A log URL that is not signed by this emulator, or has expired."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class LogUrlSigner:
    """Signs and checks log URLs; ``valid_seconds`` is how long one stays valid."""

    def __init__(self, valid_seconds: int = VALID_SECONDS) -> None:
        self.valid_seconds = valid_seconds
        self._key = secrets.token_bytes(32)

    def _signature(self, resource: str, expires: int, content_type: str) -> str:
        text = f"GET\n\n\n{expires}\n{resource}?response-content-type={content_type}"
        digest = hmac.new(self._key, text.encode(), hashlib.sha1).digest()
        return base64.b64encode(digest).decode()

    def query(self, resource: str, content_type: str, now: float | None = None) -> str:
        """The query string that signs ``resource`` (a path), to be served as
        ``content_type``, until ``valid_seconds`` from now."""
        expires = int(now if now is not None else time.time()) + self.valid_seconds
        return urlencode(
            {
                "AWSAccessKeyId": ACCESS_KEY,
                "Expires": str(expires),
                "response-content-type": content_type,
                "Signature": self._signature(resource, expires, content_type),
            }
        )

    def check(self, resource: str, query: Mapping[str, str], now: float | None = None) -> str:
        """The content type to serve when ``query`` signs ``resource`` and has not expired;
        ``LogUrlRefused`` otherwise."""
        given = query.get("Signature", "")
        content_type = query.get("response-content-type", "")
        try:
            expires = int(query.get("Expires", ""))
        except ValueError:
            raise LogUrlRefused("AccessDenied", "the URL is not signed (no Expires)") from None
        if query.get("AWSAccessKeyId") != ACCESS_KEY or not hmac.compare_digest(
            given, self._signature(resource, expires, content_type)
        ):
            raise LogUrlRefused(
                "SignatureDoesNotMatch", "the signature does not match the URL's resource"
            )
        if (now if now is not None else time.time()) > expires:
            raise LogUrlRefused("AccessDenied", "Request has expired")
        return content_type
