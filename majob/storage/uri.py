"""``ObsUri``: one parsed, normalised OBS location.

Accepted forms are ``obs://bucket/key`` (SDK and CLI form) and ``/bucket/key`` (the form the
REST v2 API documents). A trailing ``/`` means a directory ("prefix"); keys are UTF-8 and at most
1,024 bytes. Bucket names follow the OBS rules: 3-63 characters of lower-case letters, digits,
hyphens and periods, starting and ending with a letter or digit, no ``..``, ``.-`` or ``-.``, and
not shaped like an IP address.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from majob.errors import ObsUriError

_BUCKET_CHARS = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_IP_SHAPED = re.compile(r"^\d{1,3}(\.\d{1,3}){3}$")
MAX_KEY_BYTES = 1024


def bucket_name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid OBS bucket name, or None when it is."""
    if not 3 <= len(name) <= 63:
        return f"bucket name {name!r} must be 3-63 characters long"
    if not _BUCKET_CHARS.match(name):
        return (
            f"bucket name {name!r} may hold only lower-case letters, digits, '-' and '.', "
            "and must start and end with a letter or digit"
        )
    if ".." in name or ".-" in name or "-." in name:
        return f"bucket name {name!r} must not contain '..', '.-' or '-.'"
    if _IP_SHAPED.match(name):
        return f"bucket name {name!r} must not look like an IP address"
    return None


@dataclass(frozen=True, order=True)
class ObsUri:
    """A bucket and a key; ``key`` is ``""`` for the bucket root and ends with ``/`` for dirs."""

    bucket: str
    key: str = ""

    def __post_init__(self) -> None:
        problem = bucket_name_problem(self.bucket)
        if problem:
            raise ObsUriError(problem)
        if self.key.startswith("/"):
            raise ObsUriError(f"key {self.key!r} must not start with '/'")
        if "//" in self.key:
            raise ObsUriError(f"key {self.key!r} has an empty path segment ('//')")
        try:
            size = len(self.key.encode("utf-8"))
        except UnicodeEncodeError:  # a file name the file system holds as non-UTF-8 bytes
            raise ObsUriError(f"key {self.key!r} is not UTF-8") from None
        if size > MAX_KEY_BYTES:
            raise ObsUriError(f"key is longer than {MAX_KEY_BYTES} bytes in UTF-8")
        if any(part in (".", "..") for part in self.key.split("/")):
            raise ObsUriError(f"key {self.key!r} must not contain '.' or '..' segments")

    @classmethod
    def parse(cls, text: str) -> ObsUri:
        """Parse ``obs://bucket/key`` or ``/bucket/key``; anything else is an ``ObsUriError``."""
        if not isinstance(text, str):
            raise ObsUriError(f"an OBS path must be a string, not {type(text).__name__}")
        if text.startswith("obs://"):
            rest = text[len("obs://") :]
        elif text.startswith("/") and not text.startswith("//"):
            rest = text[1:]
        elif "://" in text:
            scheme = text.split("://", 1)[0]
            raise ObsUriError(
                f"{text!r} is not an OBS path: scheme {scheme!r} is not 'obs'",
            )
        else:
            raise ObsUriError(
                f"{text!r} is not an OBS path: write obs://bucket/path/ (or /bucket/path/)",
            )
        bucket, _, key = rest.partition("/")
        if not bucket:
            raise ObsUriError(f"{text!r} has no bucket name: write obs://bucket/path/")
        return cls(bucket, key)

    @property
    def is_dir(self) -> bool:
        """True for the bucket root and for keys that end with ``/``."""
        return self.key == "" or self.key.endswith("/")

    @property
    def name(self) -> str:
        """The last path segment (``code`` for ``obs://b/a/code/``), ``""`` for the root."""
        return self.key.rstrip("/").rsplit("/", 1)[-1]

    def as_dir(self) -> ObsUri:
        """The same location as a directory (with a trailing ``/``)."""
        return self if self.is_dir else ObsUri(self.bucket, self.key + "/")

    def join(self, *parts: str) -> ObsUri:
        """A location below this directory; ``parts`` are relative, ``/``-separated."""
        key = self.as_dir().key
        for part in parts:
            if part.startswith("/"):
                raise ObsUriError(f"cannot join absolute part {part!r} to {self}")
            key += part if not key or key.endswith("/") else "/" + part
        return ObsUri(self.bucket, key)

    def relative_to(self, parent: ObsUri) -> str:
        """This key relative to directory ``parent``; an error if it is not below it."""
        prefix = parent.as_dir().key
        if self.bucket != parent.bucket or not self.key.startswith(prefix):
            raise ObsUriError(f"{self} is not inside {parent.as_dir()}")
        return self.key[len(prefix) :]

    @property
    def uri(self) -> str:
        """``obs://bucket/key``: the SDK, CLI and ``session.obs`` form."""
        return f"obs://{self.bucket}/{self.key}"

    @property
    def rest_path(self) -> str:
        """``/bucket/key``: the form the REST v2 API documents for ``obs_url`` and ``code_dir``."""
        return f"/{self.bucket}/{self.key}"

    def __str__(self) -> str:
        return self.uri
