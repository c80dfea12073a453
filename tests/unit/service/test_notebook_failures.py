"""A notebook SDK failure read into majob's error tree, whatever form it takes; the submit id
tag of a description."""

from __future__ import annotations

import pytest

from majob.errors import ServiceAuthError, ServiceError, ServiceNotFound, ServiceUnreachable
from majob.service.notebook import MAX_DESCRIPTION, description_tag, tagged_description
from majob.service.notebook_failures import notebook_error, refusal

BODY = '{"error_code": "ModelArts.2751", "error_msg": "name taken", "error_solution": "rename"}'


def test_a_status_and_an_error_body_in_the_text() -> None:
    error = notebook_error(Exception(f"400 {BODY}"), action="create job 'j'")
    assert type(error) is ServiceError
    assert (error.code, error.status, error.detail) == (
        "ModelArts.2751",
        400,
        "create job 'j': name taken",
    )
    assert error.hint == "rename"


@pytest.mark.parametrize(
    ("text", "kind", "status"),
    [
        ('404 {"error_code": "ModelArts.0000", "error_msg": "job x does not exist"}', ServiceNotFound, 404),
        ('401 {"error_code": "APIGW.0301", "error_msg": "verify aksk signature fail"}', ServiceAuthError, 401),
        ("HTTP 503 service unavailable", ServiceError, 503),
        ("failed: ModelArts.2763 flavor is invalid", ServiceError, 400),
    ],
)  # fmt: skip
def test_what_the_text_says_picks_the_error(text: str, kind: type, status: int) -> None:
    error = notebook_error(Exception(text), action="a")
    assert type(error) is kind and error.status == status


def test_a_failed_connection_is_unreachable_and_masked() -> None:
    error = notebook_error(
        ConnectionError("refused by 10.0.0.1 sk-12345678"), action="a", secrets=["sk-12345678"]
    )
    assert isinstance(error, ServiceUnreachable)
    assert "sk-12345678" not in str(error)


def test_an_error_returned_as_the_answer() -> None:
    said = refusal({"error_code": "ModelArts.2752", "error_msg": "job abc does not exist"})
    assert said is not None and (said.status_code, said.error_code) == (404, "ModelArts.2752")
    assert refusal({"kind": "job", "metadata": {}}) is None


def test_the_description_tag_fits_and_reads_back() -> None:
    assert description_tag(tagged_description("", "ab12")) == "ab12"
    long = tagged_description("x" * 300, "ab12")
    assert len(long) <= MAX_DESCRIPTION and description_tag(long) == "ab12"
    assert description_tag("a job [majob/submit-id=ab12] with more after") is None
