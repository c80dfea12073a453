"""The refusals of the fake OBS, worded the way OBS and S3 word them."""

from __future__ import annotations


class ObsServiceError(Exception):
    """A refusal the way OBS words it: HTTP status, error code and message."""

    def __init__(
        self, status: int, code: str, message: str, *, resource: str = "", **extra: str
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.resource = resource
        self.extra = extra


def no_such_bucket(bucket: str) -> ObsServiceError:
    return ObsServiceError(
        404,
        "NoSuchBucket",
        "The specified bucket does not exist",
        resource=bucket,
        BucketName=bucket,
    )


def no_such_key(bucket: str, key: str) -> ObsServiceError:
    return ObsServiceError(
        404, "NoSuchKey", "The specified key does not exist.", resource=f"{bucket}/{key}", Key=key
    )


def no_such_upload(upload_id: str) -> ObsServiceError:
    return ObsServiceError(
        404,
        "NoSuchUpload",
        "The specified multipart upload does not exist.",
        UploadId=upload_id,
    )


def malformed() -> ObsServiceError:
    return ObsServiceError(
        400,
        "MalformedXML",
        "The XML you provided was not well-formed or did not validate against our published schema",
    )


def invalid_argument(message: str, name: str, value: str = "") -> ObsServiceError:
    return ObsServiceError(400, "InvalidArgument", message, ArgumentName=name, ArgumentValue=value)


def invalid_request(message: str) -> ObsServiceError:
    return ObsServiceError(400, "InvalidRequest", message)


def precondition_failed(condition: str) -> ObsServiceError:
    return ObsServiceError(
        412,
        "PreconditionFailed",
        "At least one of the pre-conditions you specified did not hold",
        Condition=condition,
    )
