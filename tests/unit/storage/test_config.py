"""Credentials (environment, 0600 file) and endpoint settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.errors import ConfigError
from majob.storage.config import Credentials, ObsConfig, load_credentials, read_credentials_file


def write_secret(path: Path, text: str, mode: int = 0o600) -> Path:
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def test_environment_credentials_with_token() -> None:
    env = {
        "HUAWEICLOUD_SDK_AK": "AK1",
        "HUAWEICLOUD_SDK_SK": "SK1",
        "HUAWEICLOUD_SDK_SECURITY_TOKEN": "TOKEN1",
    }
    creds = load_credentials(env)
    assert (creds.access_key, creds.secret_key, creds.security_token) == ("AK1", "SK1", "TOKEN1")
    assert creds.source == "environment"
    assert "SK1" not in repr(creds) and "TOKEN1" not in repr(creds)
    assert creds.secrets() == ("SK1", "TOKEN1")


def test_half_set_environment_is_an_error() -> None:
    with pytest.raises(ConfigError, match="HUAWEICLOUD_SDK_SK is not set"):
        load_credentials({"HUAWEICLOUD_SDK_AK": "AK1"})


def test_no_credentials_says_what_to_set(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no OBS credentials") as caught:
        load_credentials({"MAJOB_CONFIG_DIR": str(tmp_path)})
    assert caught.value.hint and "HUAWEICLOUD_SDK_AK" in caught.value.hint


def test_credentials_file_in_the_config_dir(tmp_path: Path) -> None:
    write_secret(tmp_path / "credentials", "ak = CFG\nsk = CFGSK\n")
    creds = load_credentials({"MAJOB_CONFIG_DIR": str(tmp_path)})
    assert creds.access_key == "CFG" and creds.source == f"file {tmp_path / 'credentials'}"


def test_file_with_key_value_lines(tmp_path: Path) -> None:
    path = write_secret(tmp_path / "creds", "# mine\nak = AK2\nsk = 'SK2'\nsecurity_token: T2\n")
    creds = load_credentials({"MAJOB_OBS_CREDENTIALS": str(path)})
    assert (creds.access_key, creds.secret_key, creds.security_token) == ("AK2", "SK2", "T2")
    assert creds.source == f"file {path}"


def test_console_csv_file(tmp_path: Path) -> None:
    path = write_secret(
        tmp_path / "credentials.csv", "User Name,Access Key Id,Secret Access Key\nme,AK3,SK3\n"
    )
    creds = read_credentials_file(path)
    assert (creds.access_key, creds.secret_key) == ("AK3", "SK3")


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_file_readable_by_others_is_refused(tmp_path: Path, mode: int) -> None:
    path = write_secret(tmp_path / "creds", "ak = A\nsk = S\n", mode)
    with pytest.raises(ConfigError, match="accessible by other users") as caught:
        read_credentials_file(path)
    assert caught.value.hint == f"run: chmod 600 {path}"


def test_bad_line_does_not_echo_the_secret(tmp_path: Path) -> None:
    path = write_secret(tmp_path / "creds", "ak = A\nsecretvalue-do-not-print\n")
    with pytest.raises(ConfigError) as caught:
        read_credentials_file(path)
    assert f"{path}:2:" in str(caught.value)
    assert "secretvalue" not in "\n".join(caught.value.lines())


def test_file_missing_a_key(tmp_path: Path) -> None:
    path = write_secret(tmp_path / "creds", "ak = A\n")
    with pytest.raises(ConfigError, match="both an access key and a secret key"):
        read_credentials_file(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read credentials file"):
        read_credentials_file(tmp_path / "nope")


def test_environment_wins_over_the_file(tmp_path: Path) -> None:
    path = write_secret(tmp_path / "creds", "ak = FILE\nsk = FILE\n")
    env = {"HUAWEICLOUD_SDK_AK": "ENV", "HUAWEICLOUD_SDK_SK": "ENV"}
    assert load_credentials(env, file=path).access_key == "ENV"


def test_endpoint_from_region_or_explicit() -> None:
    assert (
        ObsConfig(region="cn-north-4").resolved_endpoint()
        == "https://obs.cn-north-4.myhuaweicloud.com"
    )
    config = ObsConfig(endpoint="http://127.0.0.1:9000/")
    assert config.resolved_endpoint() == "http://127.0.0.1:9000"
    assert config.resolved_region() == "cn-north-4"
    assert (
        ObsConfig(endpoint="https://obs.ap-southeast-1.myhuaweicloud.com").resolved_region()
        == "ap-southeast-1"
    )
    with pytest.raises(ConfigError, match="neither a region nor an endpoint"):
        ObsConfig().resolved_endpoint()


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"endpoint": "127.0.0.1:9000"}, "must look like"),
        ({"endpoint": "ftp://host"}, "must look like"),
        ({"endpoint": "http://host/path"}, "must look like"),
        ({"region": "North 4"}, "not a Huawei Cloud region"),
        ({"signature": "v3"}, "unknown OBS signature"),
        ({"timeout": 0}, "timeout must be positive"),
    ],
)
def test_bad_settings(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        ObsConfig(**settings)  # type: ignore[arg-type]


def test_from_env_reads_every_setting(tmp_path: Path) -> None:
    env = {
        "MAJOB_OBS_ENDPOINT": "http://127.0.0.1:1234",
        "MAJOB_OBS_REGION": "cn-east-3",
        "MAJOB_OBS_SIGNATURE": "obs",
        "MAJOB_OBS_TIMEOUT": "2.5",
        "MAJOB_OBS_RETRIES": "7",
        "MAJOB_OBS_CREDENTIALS": str(tmp_path / "c"),
    }
    config = ObsConfig.from_env(env, retries=1, region=None)
    assert config == ObsConfig(
        endpoint="http://127.0.0.1:1234",
        region="cn-east-3",
        signature="obs",
        timeout=2.5,
        retries=1,
        credentials_file=tmp_path / "c",
    )
    with pytest.raises(ConfigError, match="MAJOB_OBS_TIMEOUT='soon' is not a number"):
        ObsConfig.from_env({"MAJOB_OBS_TIMEOUT": "soon"})


def test_explicit_credentials_are_used_as_given() -> None:
    creds = Credentials("A", "S")
    assert ObsConfig(region="cn-north-4", credentials=creds).resolved_credentials({}) is creds
