"""Where OBS is and who we are to it: ``ObsConfig`` and ``Credentials``.

Credentials come from the environment (``HUAWEICLOUD_SDK_AK`` / ``HUAWEICLOUD_SDK_SK``, plus
``HUAWEICLOUD_SDK_SECURITY_TOKEN`` for temporary credentials) or from a credentials file that
only its owner may read (mode 0600). The endpoint is ``https://obs.<region>.myhuaweicloud.com``
or given explicitly (``MAJOB_OBS_ENDPOINT``; the emulator is ``http://127.0.0.1:PORT``).
Nothing here imports the OBS SDK.
"""

from __future__ import annotations

import csv
import io
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from majob.errors import ConfigError
from majob.storage.dirs import config_dir

Signature = Literal["v4", "v2", "obs"]
SIGNATURES: tuple[Signature, ...] = ("v4", "v2", "obs")
DEFAULT_REGION = "cn-north-4"
CREDENTIALS_FILE = "credentials"  # in majob's config dir, next to profiles.yaml
_REGION_HOST = re.compile(r"^obs\.([a-z0-9-]+)\.myhuaweicloud\.com$")
_REGION = re.compile(r"^[a-z]{2}(-[a-z0-9]+)+$")


@dataclass(frozen=True)
class Credentials:
    """An access key pair; the secret parts never show in a repr."""

    access_key: str
    secret_key: str = field(repr=False)
    security_token: str | None = field(default=None, repr=False)
    source: str = "argument"

    def secrets(self) -> tuple[str, ...]:
        """The strings that must never appear in output."""
        return tuple(s for s in (self.secret_key, self.security_token) if s)


def load_credentials(
    environ: Mapping[str, str] | None = None, *, file: Path | None = None
) -> Credentials:
    """Credentials from the environment, else from ``file`` (or ``MAJOB_OBS_CREDENTIALS``, or
    ``credentials`` in majob's config dir when it exists, e.g. ``~/.config/majob/credentials``).
    A ``ConfigError`` says what to set when there are none."""
    env = os.environ if environ is None else environ
    access_key = env.get("HUAWEICLOUD_SDK_AK", "").strip()
    secret_key = env.get("HUAWEICLOUD_SDK_SK", "").strip()
    token = env.get("HUAWEICLOUD_SDK_SECURITY_TOKEN", "").strip() or None
    if access_key or secret_key:
        if not (access_key and secret_key):
            missing = "HUAWEICLOUD_SDK_SK" if access_key else "HUAWEICLOUD_SDK_AK"
            raise ConfigError(
                f"{missing} is not set but its partner is",
                hint="set both HUAWEICLOUD_SDK_AK and HUAWEICLOUD_SDK_SK",
            )
        return Credentials(access_key, secret_key, token, source="environment")
    if file is None and env.get("MAJOB_OBS_CREDENTIALS"):
        file = Path(env["MAJOB_OBS_CREDENTIALS"])
    if file is None:
        default = config_dir(env) / CREDENTIALS_FILE
        if default.exists():
            file = default
    if file is None:
        raise ConfigError(
            "no OBS credentials found",
            hint="set HUAWEICLOUD_SDK_AK and HUAWEICLOUD_SDK_SK, or write 'ak = ...' and "
            f"'sk = ...' lines to {config_dir(env) / CREDENTIALS_FILE} (chmod 600) or to a file "
            "named by MAJOB_OBS_CREDENTIALS",
        )
    return read_credentials_file(file.expanduser())


def read_credentials_file(path: Path) -> Credentials:
    """Read ``ak = ...`` / ``sk = ...`` / ``security_token = ...`` lines, or the
    ``credentials.csv`` the console downloads. The file must be readable by its owner only."""
    try:
        mode = path.stat().st_mode
    except OSError as error:
        raise ConfigError(
            f"cannot read credentials file {path}: {error.strerror}",
            hint="check MAJOB_OBS_CREDENTIALS",
        ) from error
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f"credentials file {path} is accessible by other users (mode {stat.S_IMODE(mode):04o})",
            hint=f"run: chmod 600 {path}",
        )
    text = path.read_text(encoding="utf-8-sig")
    values = _parse_csv(text) if "access key id" in text.lower() else _parse_lines(text, path)
    access_key = values.get("ak", "")
    secret_key = values.get("sk", "")
    if not access_key or not secret_key:
        raise ConfigError(
            f"credentials file {path} must give both an access key and a secret key",
            hint="write two lines: 'ak = <access key>' and 'sk = <secret key>'",
        )
    return Credentials(
        access_key, secret_key, values.get("security_token") or None, source=f"file {path}"
    )


_ALIASES = {
    "ak": "ak",
    "access_key": "ak",
    "access_key_id": "ak",
    "huaweicloud_sdk_ak": "ak",
    "sk": "sk",
    "secret_key": "sk",
    "secret_access_key": "sk",
    "huaweicloud_sdk_sk": "sk",
    "security_token": "security_token",
    "token": "security_token",
    "huaweicloud_sdk_security_token": "security_token",
}


def _parse_lines(text: str, path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";", "[")):
            continue
        name, sep, value = line.partition("=")
        if not sep:
            name, sep, value = line.partition(":")
        known = _ALIASES.get(name.strip().lower().replace("-", "_"))
        if not sep or known is None:
            # Never echo the line: it may hold a secret.
            raise ConfigError(
                f"{path}:{number}: expected 'ak = ...', 'sk = ...' or 'security_token = ...'"
            )
        values[known] = value.strip().strip("'\"")
    return values


def _parse_csv(text: str) -> dict[str, str]:
    rows = list(csv.DictReader(io.StringIO(text)))
    if not rows:
        return {}
    row = {name.strip().lower(): (value or "").strip() for name, value in rows[0].items() if name}
    return {"ak": row.get("access key id", ""), "sk": row.get("secret access key", "")}


@dataclass(frozen=True)
class ObsConfig:
    """How to reach OBS. ``credentials=None`` loads them (environment, then file) on open."""

    endpoint: str | None = None
    region: str | None = None
    credentials: Credentials | None = None
    credentials_file: Path | None = None
    signature: Signature = "v4"
    timeout: float = 30.0  # seconds per socket operation; also bounds the retries of one call
    retries: int = 5  # more requests after the first; the one retry layer (storage/retry.py)

    def __post_init__(self) -> None:
        if self.signature not in SIGNATURES:
            raise ConfigError(
                f"unknown OBS signature {self.signature!r}", hint="use one of: v4, v2, obs"
            )
        if self.region is not None and not _REGION.match(self.region):
            raise ConfigError(
                f"{self.region!r} is not a Huawei Cloud region", hint="e.g. cn-north-4"
            )
        if self.endpoint is not None:
            parts = urlsplit(self.endpoint)
            if (
                parts.scheme not in ("http", "https")
                or not parts.hostname
                or parts.path
                not in (
                    "",
                    "/",
                )
            ):
                raise ConfigError(
                    f"OBS endpoint {self.endpoint!r} must look like https://host[:port]",
                    hint="e.g. https://obs.cn-north-4.myhuaweicloud.com or http://127.0.0.1:9000",
                )
        if self.timeout <= 0 or self.retries < 0:
            raise ConfigError("OBS timeout must be positive and retries not negative")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: object) -> ObsConfig:
        """Settings from ``MAJOB_OBS_*`` variables; ``overrides`` that are not None win."""
        env = os.environ if environ is None else environ
        settings: dict[str, object] = {}
        if env.get("MAJOB_OBS_ENDPOINT"):
            settings["endpoint"] = env["MAJOB_OBS_ENDPOINT"]
        region = env.get("MAJOB_OBS_REGION") or env.get("HUAWEICLOUD_SDK_REGION")
        if region:
            settings["region"] = region
        if env.get("MAJOB_OBS_SIGNATURE"):
            settings["signature"] = env["MAJOB_OBS_SIGNATURE"]
        for name, kind in (("timeout", float), ("retries", int)):
            text = env.get(f"MAJOB_OBS_{name.upper()}")
            if text:
                try:
                    settings[name] = kind(text)
                except ValueError as error:
                    raise ConfigError(
                        f"MAJOB_OBS_{name.upper()}={text!r} is not a number"
                    ) from error
        if env.get("MAJOB_OBS_CREDENTIALS"):
            settings["credentials_file"] = Path(env["MAJOB_OBS_CREDENTIALS"])
        settings.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**settings)  # type: ignore[arg-type]

    def resolved_endpoint(self) -> str:
        """The explicit endpoint, or the regional one."""
        if self.endpoint:
            return self.endpoint.rstrip("/")
        if self.region:
            return f"https://obs.{self.region}.myhuaweicloud.com"
        raise ConfigError(
            "no OBS endpoint: neither a region nor an endpoint is set",
            hint="set MAJOB_OBS_REGION (e.g. cn-north-4) or MAJOB_OBS_ENDPOINT",
        )

    def resolved_region(self) -> str:
        """The region V4 signatures are scoped to."""
        if self.region:
            return self.region
        host = urlsplit(self.endpoint or "").hostname or ""
        match = _REGION_HOST.match(host)
        return match.group(1) if match else DEFAULT_REGION

    def resolved_credentials(self, environ: Mapping[str, str] | None = None) -> Credentials:
        return self.credentials or load_credentials(environ, file=self.credentials_file)

    def with_credentials(self, credentials: Credentials) -> ObsConfig:
        return replace(self, credentials=credentials)
