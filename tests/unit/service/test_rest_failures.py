"""Every SDK failure becomes a ServiceError naming the ModelArts code, remedy and request id,
never a secret (the httpx habit: prove the mapping covers every exception class)."""

from __future__ import annotations

import inspect

import pytest
import requests
from huaweicloudsdkcore.exceptions import exceptions as sdk

from majob.errors import ServiceAuthError, ServiceError, ServiceNotFound, ServiceUnreachable
from majob.service.rest_failures import is_retryable, service_error

SECRET = "s3cr3t-key-value"


def response_error(cls: type, status: int, code: str, message: str) -> sdk.ServiceResponseException:
    error = cls(status, sdk.SdkError(request_id="req-1", error_code=code, error_msg=message))
    return error


def test_a_refusal_carries_code_message_remedy_and_request_id() -> None:
    failure = response_error(sdk.ClientRequestException, 400, "ModelArts.2763", "flavor not found")
    failure.error_solution = "Use a flavor from the flavor list."
    error = service_error(failure, action="create job 'mnist'")
    assert type(error) is ServiceError
    assert error.code == "ModelArts.2763"
    assert error.remedy == "Use a flavor from the flavor list."
    assert error.request_id == "req-1"
    assert error.lines() == [
        "ModelArts.2763: create job 'mnist': flavor not found; status=400; request_id=req-1",
        "hint: Use a flavor from the flavor list.",
    ]


@pytest.mark.parametrize(
    ("failure", "kind", "retryable"),
    [
        (
            response_error(
                sdk.ClientRequestException,
                401,
                "APIGW.0301",
                "Incorrect IAM authentication information",
            ),
            ServiceAuthError,
            False,
        ),
        (
            response_error(sdk.ClientRequestException, 403, "403", "forbidden"),
            ServiceAuthError,
            False,
        ),
        (
            response_error(sdk.ClientRequestException, 404, "ModelArts.2762", "job not found"),
            ServiceNotFound,
            False,
        ),
        (
            response_error(sdk.ClientRequestException, 429, "ModelArts.0002", "too many requests"),
            ServiceError,
            True,
        ),
        (
            response_error(sdk.ServerResponseException, 503, "503", "unavailable"),
            ServiceError,
            True,
        ),
        (
            response_error(sdk.ClientRequestException, 400, "ModelArts.2751", "duplicate name"),
            ServiceError,
            False,
        ),
        (
            sdk.ConnectionException("Connection aborted: RemoteDisconnected"),
            ServiceUnreachable,
            True,
        ),
        (sdk.HostUnreachableException("Name or service not known"), ServiceUnreachable, True),
        (sdk.CallTimeoutException("Read timed out"), ServiceUnreachable, True),
        (requests.exceptions.ReadTimeout("read timed out"), ServiceUnreachable, True),
        (ConnectionResetError("reset by peer"), ServiceUnreachable, True),
    ],
)
def test_the_mapping(failure: BaseException, kind: type, retryable: bool) -> None:
    error = service_error(failure, action="show job x")
    assert type(error) is kind
    assert is_retryable(error) is retryable


def test_a_status_only_error_code_is_not_shown_as_a_modelarts_code() -> None:
    error = service_error(response_error(sdk.ServerResponseException, 503, "503", "x"), action="a")
    assert error.code is None
    assert error.status == 503


def test_every_sdk_exception_class_is_mapped() -> None:
    classes = [
        cls
        for _, cls in inspect.getmembers(sdk, inspect.isclass)
        if issubclass(cls, sdk.SdkException)
    ]
    assert len(classes) >= 9
    for cls in classes:
        if issubclass(cls, sdk.ServiceResponseException):
            failure: BaseException = cls(500, sdk.SdkError(error_msg="x"))
        else:
            failure = cls("x")
        assert isinstance(service_error(failure, action="call"), ServiceError), cls


def test_secrets_are_masked() -> None:
    failure = sdk.SdkException(f"signing failed with {SECRET}")
    error = service_error(failure, action="list jobs", secrets=[SECRET])
    assert SECRET not in " ".join(error.lines())
    assert "***" in error.message
