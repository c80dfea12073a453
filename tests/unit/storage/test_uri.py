"""``ObsUri``: both forms, bucket rules, directories, joining, errors."""

from __future__ import annotations

import pytest

from majob.errors import ObsUriError, UserInputError
from majob.storage.uri import ObsUri, bucket_name_problem


@pytest.mark.parametrize(
    ("text", "bucket", "key"),
    [
        ("obs://bkt/a/b.txt", "bkt", "a/b.txt"),
        ("/bkt/a/b.txt", "bkt", "a/b.txt"),
        ("obs://bkt", "bkt", ""),
        ("obs://bkt/", "bkt", ""),
        ("/my.bucket-1/dir/", "my.bucket-1", "dir/"),
        ("obs://bkt/données/ü b+c.txt", "bkt", "données/ü b+c.txt"),
    ],
)
def test_both_forms_parse(text: str, bucket: str, key: str) -> None:
    uri = ObsUri.parse(text)
    assert (uri.bucket, uri.key) == (bucket, key)
    assert ObsUri.parse(uri.uri) == uri
    assert ObsUri.parse(uri.rest_path) == uri


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("ab", "3-63 characters"),
        ("a" * 64, "3-63 characters"),
        ("Bucket", "lower-case"),
        ("my_bucket", "lower-case"),
        ("-bucket", "start and end"),
        ("bucket-", "start and end"),
        ("a..b", "'..'"),
        ("a.-b", "'.-'"),
        ("a-.b", "'-.'"),
        ("192.168.1.10", "IP address"),
    ],
)
def test_invalid_bucket_names_say_why(name: str, problem: str) -> None:
    reason = bucket_name_problem(name)
    assert reason is not None and problem in reason
    with pytest.raises(ObsUriError, match=problem.replace(".", r"\.")):
        ObsUri.parse(f"obs://{name}/k")


@pytest.mark.parametrize("name", ["abc", "a" * 63, "my.bucket", "b-1.2-c", "1bucket"])
def test_valid_bucket_names(name: str) -> None:
    assert bucket_name_problem(name) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("s3://bkt/k", "scheme 's3' is not 'obs'"),
        ("bkt/k", "write obs://bucket/path/"),
        ("//bkt/k", "write obs://bucket/path/"),
        ("obs:///k", "no bucket name"),
        ("obs://bkt//k", "must not start with"),
        ("obs://bkt/a//k", "empty path segment"),
        ("obs://bkt/a/../b", "'.' or '..'"),
        ("obs://bkt/./a", "'.' or '..'"),
        ("obs://bkt/" + "é" * 513, "1024 bytes"),
    ],
)
def test_malformed_paths_are_user_errors(text: str, message: str) -> None:
    with pytest.raises(ObsUriError) as caught:
        ObsUri.parse(text)
    assert message in str(caught.value)
    assert isinstance(caught.value, UserInputError) and isinstance(caught.value, ValueError)
    assert caught.value.exit_code == 2


def test_non_string_is_refused() -> None:
    with pytest.raises(ObsUriError, match="must be a string"):
        ObsUri.parse(42)  # type: ignore[arg-type]


def test_directory_semantics() -> None:
    assert ObsUri.parse("obs://bkt").is_dir
    assert ObsUri.parse("obs://bkt/code/").is_dir
    assert not ObsUri.parse("obs://bkt/code").is_dir
    assert ObsUri.parse("obs://bkt/code").as_dir().key == "code/"
    assert ObsUri.parse("obs://bkt/a/code/").name == "code"
    assert ObsUri.parse("obs://bkt/a/x.py").name == "x.py"
    assert ObsUri.parse("obs://bkt").name == ""


def test_join_treats_the_base_as_a_directory() -> None:
    base = ObsUri.parse("obs://bkt/runs")
    assert base.join("a", "b.txt").uri == "obs://bkt/runs/a/b.txt"
    assert base.join("sub/").uri == "obs://bkt/runs/sub/"
    assert ObsUri.parse("obs://bkt").join("x").uri == "obs://bkt/x"
    with pytest.raises(ObsUriError, match="absolute part"):
        base.join("/etc")
    with pytest.raises(ObsUriError, match=r"'\.' or '\.\.'"):
        base.join("../escape")


def test_relative_to() -> None:
    parent = ObsUri.parse("obs://bkt/runs")
    assert ObsUri.parse("obs://bkt/runs/a/b.txt").relative_to(parent) == "a/b.txt"
    assert ObsUri.parse("obs://bkt/runs/").relative_to(parent) == ""
    with pytest.raises(ObsUriError, match="not inside"):
        ObsUri.parse("obs://bkt/runsx/a").relative_to(parent)
    with pytest.raises(ObsUriError, match="not inside"):
        ObsUri.parse("obs://other/runs/a").relative_to(parent)


def test_str_and_ordering() -> None:
    uris = [ObsUri.parse("obs://b-b/z"), ObsUri.parse("obs://a-a/y")]
    assert str(uris[0]) == "obs://b-b/z"
    assert sorted(uris)[0].bucket == "a-a"
