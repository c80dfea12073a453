"""The stand-in's one door to the service: a signed REST v2 call, its answer as JSON.

The official ``huaweicloudsdkmodelarts`` client signs and sends; the answer is read from its raw
JSON, as the notebook SDK hands callers dicts. A refusal is an ``APIException`` whose text holds
the status and the service's error body (``error_code``, ``error_msg``, ``error_solution``); the
real SDK's exception types are undocumented [U], so callers should rely on that text only. A
connection that fails is a ``ConnectionError`` (a time-out, ``TimeoutError``), as ``requests``'
own errors are ``OSError``s.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from huaweicloudsdkcore.auth.credentials import BasicCredentials
from huaweicloudsdkcore.exceptions.exceptions import (
    ClientRequestException,
    ConnectionException,
    RequestTimeoutException,
    ServerResponseException,
)
from huaweicloudsdkcore.http.http_config import HttpConfig
from huaweicloudsdkmodelarts.v1 import ModelArtsClient

#: (connect, read) seconds of one call [U: the real SDK's are undocumented]; a test may shorten
#: them to make a slow answer arrive after the caller gave up.
TIMEOUT = (5.0, 30.0)


class APIException(Exception):
    """ModelArts refused a call: ``"<status> <error body as JSON>"``."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(f"{status} {json.dumps(body)}")
        self.status = status
        self.body = body


def build_client(
    endpoint: str,
    access_key: str,
    secret_key: str,
    project_id: str,
    security_token: str | None = None,
) -> Any:
    config = HttpConfig.get_default_config()
    config.retry_times = 0
    config.timeout = TIMEOUT
    credentials = BasicCredentials(access_key, secret_key, project_id)
    if security_token:  # temporary keys (a password session's) sign with their token
        credentials = credentials.with_security_token(security_token)
    return (
        ModelArtsClient.new_builder()
        .with_http_config(config)
        .with_credentials(credentials)
        .with_endpoint(endpoint)
        .build()
    )


def call(send: Callable[[], Any]) -> Any:
    """Run one client call; its JSON answer (None for an empty one)."""
    try:
        response = send()
    except (ClientRequestException, ServerResponseException) as error:
        body = {
            "error_code": error.error_code,
            "error_msg": error.error_msg,
            "error_solution": getattr(error, "error_solution", None) or "",
        }
        raise APIException(error.status_code, body) from None
    except RequestTimeoutException as error:
        raise TimeoutError(str(error.error_msg)) from None
    except ConnectionException as error:
        raise ConnectionError(str(error.error_msg)) from None
    raw = getattr(response, "raw_content", None)
    return json.loads(raw) if raw else None
