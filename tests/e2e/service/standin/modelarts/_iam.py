"""A password session's keys, from IAM (reference §2.1; Huawei IAM API reference): the password
is exchanged for a project-scoped token (``POST /v3/auth/tokens``, token in
``X-Subject-Token``), the token for temporary keys (``POST /v3.0/OS-CREDENTIAL/securitytokens``)
that sign the session's requests with their security token [U: how the real SDK authenticates a
password session is undocumented; this is the documented way to get signing keys from one]."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def _post(url: str, body: dict[str, Any], token: str | None = None) -> tuple[dict[str, Any], Any]:
    headers = {"Content-Type": "application/json;charset=utf8"}
    if token:
        headers["X-Auth-Token"] = token
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read() or b"{}"), answer.headers
    except urllib.error.HTTPError as error:
        raise PermissionError(f"IAM refused: {error.code} {error.read().decode()}") from None


def password_credentials(
    iam_endpoint: str, domain: str, user: str, password: str, project_id: str
) -> tuple[str, str, str]:
    """``(access key, secret key, security token)`` of ``user`` in ``domain``."""
    identity = {
        "methods": ["password"],
        "password": {"user": {"name": user, "password": password, "domain": {"name": domain}}},
    }
    body = {"auth": {"identity": identity, "scope": {"project": {"id": project_id}}}}
    _, headers = _post(f"{iam_endpoint.rstrip('/')}/v3/auth/tokens", body)
    token = headers.get("X-Subject-Token")
    if not token:
        raise PermissionError("IAM answered without X-Subject-Token")
    keys_body = {"auth": {"identity": {"methods": ["token"], "token": {"duration_seconds": 900}}}}
    answer, _ = _post(
        f"{iam_endpoint.rstrip('/')}/v3.0/OS-CREDENTIAL/securitytokens", keys_body, token
    )
    credential = answer["credential"]
    return credential["access"], credential["secret"], credential["securitytoken"]
