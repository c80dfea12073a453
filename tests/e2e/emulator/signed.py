"""A signed request to the fake ModelArts through the SDK's signer, for the paths the SDK has no
call for (the log URL)."""

from __future__ import annotations

import urllib.parse
import urllib.request

from huaweicloudsdkcore.auth.credentials import BasicCredentials
from huaweicloudsdkcore.sdk_request import SdkRequest
from huaweicloudsdkcore.signer.signer import Signer

from majob.emulator.statefile import EmulatorEndpoints


def signed_get(
    endpoints: EmulatorEndpoints, rest: str, query: list[tuple[str, str]] | None = None
) -> bytes:
    """``GET /v2/{project_id}/<rest>?<query>``, signed as the SDK signs; the answer's body."""
    host = endpoints.modelarts.removeprefix("http://")
    path = f"/v2/{endpoints.project_id}/{rest}"
    request = SdkRequest(
        method="GET",
        schema="http",
        host=host,
        resource_path=path,
        query_params=list(query or []),
        header_params={"Content-Type": "application/json"},
    )
    Signer(BasicCredentials(endpoints.access_key, endpoints.secret_key)).sign(request)
    suffix = f"?{urllib.parse.urlencode(query)}" if query else ""
    signed = urllib.request.Request(
        f"{endpoints.modelarts}{path}{suffix}", headers=request.header_params
    )
    with urllib.request.urlopen(signed, timeout=10) as answer:
        body: bytes = answer.read()
    return body
