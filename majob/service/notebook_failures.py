"""What went wrong with a notebook SDK call, as a ``ServiceError``.

The SDK's exceptions are undocumented, and public callers also find a refusal as a dict with
``error_msg`` where they expected an answer. So the failure is read from what any form carries:
an ``OSError`` (``requests``' errors are ones) is a connection that failed; otherwise the text
is searched for the service's error body (``error_code``, ``error_msg``, ``error_solution``) and
an HTTP status in front of it. The result goes through the same mapping as the REST backend's
(``rest_failures.service_error``), so both backends raise the same errors for the same refusal.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from majob.errors import ServiceError
from majob.service.rest_failures import service_error

_CODE = re.compile(r"\b(ModelArts\.\d{4}|APIGW\.\d{4})\b")
_STATUS = re.compile(r"^\s*(?:HTTP\s*)?([1-5]\d\d)\b")


def _error_body(text: str) -> dict[str, Any]:
    """The JSON error body inside ``text``, if there is one."""
    start = text.find("{")
    while start != -1:
        try:
            found = json.loads(text[start:])
        except ValueError:
            end = text.rfind("}")
            try:
                found = json.loads(text[start : end + 1]) if end > start else None
            except ValueError:
                found = None
        if isinstance(found, dict):
            return found
        start = text.find("{", start + 1)
    return {}


def refusal(answer: Mapping[str, Any]) -> SimpleNamespace | None:
    """A refusal the SDK returned as its answer (a dict with ``error_code``), or None."""
    if not answer.get("error_code") and not answer.get("error_msg"):
        return None
    code = str(answer.get("error_code") or "")
    message = str(answer.get("error_msg") or code)
    # No status comes with it: a missing job is told by its message.
    missing = "not exist" in message.lower() or "not found" in message.lower()
    return SimpleNamespace(
        status_code=404 if missing else 400,
        error_code=code or None,
        error_msg=message,
        error_solution=answer.get("error_solution"),
    )


def notebook_error(
    failure: BaseException, *, action: str, secrets: Sequence[str] = ()
) -> ServiceError:
    """``failure`` of one notebook SDK call, as the REST backend would report it."""
    if isinstance(failure, OSError):
        return service_error(failure, action=action, secrets=secrets)
    text = str(failure)
    body = _error_body(text)
    status = _STATUS.match(text)
    code = body.get("error_code") or (m.group(1) if (m := _CODE.search(text)) else None)
    if status is None and code is None:
        return service_error(failure, action=action, secrets=secrets)
    described = SimpleNamespace(
        status_code=int(status.group(1)) if status else 400,
        error_code=code,
        error_msg=body.get("error_msg") or text,
        error_solution=body.get("error_solution"),
    )
    return service_error(described, action=action, secrets=secrets)
