"""The SDK-HMAC-SHA256 check agrees with huaweicloudsdkcore's own signer."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from huaweicloudsdkcore.auth.credentials import BasicCredentials
from huaweicloudsdkcore.sdk_request import SdkRequest
from huaweicloudsdkcore.signer.signer import Signer

from majob.emulator.modelarts import auth
from majob.emulator.modelarts.errors import ModelArtsError

AK, SK = "AKEXAMPLE", "secret-key-example"


def signed(
    method: str = "POST",
    path: str = "/v2/p1/training-job-searches",
    query: list[tuple[str, object]] | None = None,
    body: bytes = b'{"limit": 10}',
) -> tuple[dict[str, str], list[tuple[str, str]], bytes]:
    request = SdkRequest(
        method=method,
        schema="http",
        host="127.0.0.1:8080",
        resource_path=path,
        query_params=list(query or []),
        header_params={"Content-Type": "application/json", "X-Project-Id": "p1"},
        body=body,
    )
    Signer(BasicCredentials(AK, SK)).sign(request)
    headers = {k.lower(): str(v) for k, v in request.header_params.items()}
    pairs = [(k, str(v).lower() if isinstance(v, bool) else str(v)) for k, v in query or []]
    return headers, pairs, body


def check(
    headers: dict[str, str],
    query: list[tuple[str, str]],
    body: bytes,
    method: str = "POST",
    path: str = "/v2/p1/training-job-searches",
    **changes: object,
) -> str:
    return auth.verify(
        method=method,
        path=path,
        query=query,
        headers=headers,
        body=body,
        credentials={AK: SK},
        **changes,  # type: ignore[arg-type]
    )


def test_a_request_signed_by_the_sdk_verifies() -> None:
    assert check(*signed()) == AK


def test_query_parameters_and_an_empty_body_verify() -> None:
    query: list[tuple[str, object]] = [("lines", 50), ("base_line", 0), ("order", "asc")]
    headers, pairs, body = signed("GET", "/v2/p1/training-jobs/j-1/logs/worker-0", query, b"")
    assert check(headers, pairs, body, "GET", "/v2/p1/training-jobs/j-1/logs/worker-0") == AK


@pytest.mark.parametrize(
    "tamper",
    [
        lambda h, q, b: (h, q, json.dumps({"limit": 11}).encode()),
        lambda h, q, b: ({**h, "x-project-id": "p2"}, q, b),
        lambda h, q, b: (h, [("offset", "1")], b),
    ],
)
def test_a_changed_request_is_refused(tamper: object) -> None:
    headers, query, body = tamper(*signed())  # type: ignore[operator]
    with pytest.raises(ModelArtsError) as caught:
        check(headers, query, body)
    assert caught.value.status == 401 and "verify aksk signature fail" in caught.value.message


def test_a_wrong_secret_an_unknown_key_and_a_stale_date_are_refused() -> None:
    headers, query, body = signed()
    with pytest.raises(ModelArtsError, match="verify aksk signature fail") as wrong:
        auth.verify(
            method="POST",
            path="/v2/p1/training-job-searches",
            query=query,
            headers=headers,
            body=body,
            credentials={AK: "another-secret"},
        )
    assert "another-secret" not in str(wrong.value.body()) and SK not in str(wrong.value.body())
    with pytest.raises(ModelArtsError, match="unknown access key"):
        auth.verify(
            method="POST",
            path="/v2/p1/training-job-searches",
            query=query,
            headers=headers,
            body=body,
            credentials={"OTHER": SK},
        )
    later = datetime.now(timezone.utc) + timedelta(minutes=20)
    with pytest.raises(ModelArtsError, match="15 minutes"):
        check(headers, query, body, now=later)
    with pytest.raises(ModelArtsError, match="not signed"):
        check({**headers, "authorization": "Bearer x"}, query, body)
