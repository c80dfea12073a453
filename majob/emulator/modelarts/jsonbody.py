"""Reading one value of an untrusted JSON request body, refused with ModelArts's error when it
has the wrong shape (``where`` names it as the API does, e.g. ``algorithm.engine``)."""

from __future__ import annotations

from typing import Any

from majob.emulator.modelarts.errors import bad_request
from majob.errors import ObsUriError
from majob.storage.uri import ObsUri


def obj(value: Any, where: str) -> dict[str, Any]:
    """A JSON object; absent counts as empty."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise bad_request(f"{where} must be an object", f"send {where} as a JSON object")
    return value


def text(value: Any, where: str) -> str | None:
    """A string, or None when absent."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise bad_request(f"{where} must be a string")
    return value


def obs_path(value: str, where: str, code: str) -> ObsUri:
    """An OBS path as the API writes it: ``/bucket/path/`` or ``obs://bucket/path/``."""
    try:
        return ObsUri.parse(value)
    except ObsUriError as error:
        raise bad_request(
            f"{where}: {error.message}",
            "write the OBS path as /bucket/path/ or obs://bucket/path/",
            code,
        ) from None
