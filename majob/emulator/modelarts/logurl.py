"""The log URL of ``GET .../tasks/{task_id}/logs/url``: signed, and valid for five minutes.

The service answers with an OBS URL its own credentials presigned (the API's example ends in
``?AWSAccessKeyId=...``; reference modelarts.md §2.2: "valid 5 min"). The emulator serves the log
from its control plane and signs the URL the way an OBS V2 query-signed URL is signed:
``AWSAccessKeyId``, ``Expires`` (epoch seconds) and ``Signature`` (base64 HMAC-SHA1 of the
method, the expiry and the resource), with a key of this emulator's own, made when it starts.
A URL with a wrong or missing signature, or past its expiry, is refused with 403 as OBS refuses
it; so is every URL once the emulator that made it has stopped.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping
from urllib.parse import urlencode

VALID_SECONDS = 300
ACCESS_KEY = "MAJOBLOGURLSIGNER000"  # names the signer; the key itself is never sent


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

    def _signature(self, resource: str, expires: int) -> str:
        text = f"GET\n\n\n{expires}\n{resource}"
        digest = hmac.new(self._key, text.encode(), hashlib.sha1).digest()
        return base64.b64encode(digest).decode()

    def query(self, resource: str, now: float | None = None) -> str:
        """The query string that signs ``resource`` (a path) until ``valid_seconds`` from now."""
        expires = int(now if now is not None else time.time()) + self.valid_seconds
        return urlencode(
            {
                "AWSAccessKeyId": ACCESS_KEY,
                "Expires": str(expires),
                "Signature": self._signature(resource, expires),
            }
        )

    def check(self, resource: str, query: Mapping[str, str], now: float | None = None) -> None:
        """Nothing when ``query`` signs ``resource`` and has not expired; ``LogUrlRefused``."""
        given = query.get("Signature", "")
        try:
            expires = int(query.get("Expires", ""))
        except ValueError:
            raise LogUrlRefused("AccessDenied", "the URL is not signed (no Expires)") from None
        if query.get("AWSAccessKeyId") != ACCESS_KEY or not hmac.compare_digest(
            given, self._signature(resource, expires)
        ):
            raise LogUrlRefused(
                "SignatureDoesNotMatch", "the signature does not match the URL's resource"
            )
        if (now if now is not None else time.time()) > expires:
            raise LogUrlRefused("AccessDenied", "Request has expired")
