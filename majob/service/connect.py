"""From a profile to open clients: where ModelArts and OBS are, and which keys to use.

- Endpoint: ``MAJOB_MODELARTS_ENDPOINT``, else the profile's ``modelarts_endpoint``, else
  ``https://modelarts.<region>.myhuaweicloud.com``.
- Project id: the profile's ``project_id``, else ``HUAWEICLOUD_SDK_PROJECT_ID``.
- Credentials: for an emulated profile, the running emulator's documented test keys; otherwise
  ``HUAWEICLOUD_SDK_AK``/``SK`` (+ ``HUAWEICLOUD_SDK_SECURITY_TOKEN``) or the 0600 credentials
  file (``majob.storage.config.load_credentials``: the same keys serve OBS and ModelArts).

Nothing here imports an SDK; ``open_service`` and ``open_store`` do, inside.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from majob.errors import ConfigError, ServiceUnreachable
from majob.storage.config import Credentials, ObsConfig, load_credentials

if TYPE_CHECKING:
    from majob.service.rest import RestTrainingService, ServiceConfig
    from majob.spec.profiles import Profile
    from majob.storage.obs import ObsObjectStore

CONSOLE = "https://console.huaweicloud.com/modelarts/?region={region}#/trainingJobs"


def is_emulated(profile: Profile) -> bool:
    return profile.emulated


def _emulator_credentials() -> Credentials:
    from majob.spec.emulator_state import running_emulator

    endpoints = running_emulator()
    return Credentials(endpoints.access_key, endpoints.secret_key, source="emulator")


def credentials_for(profile: Profile, environ: Mapping[str, str] | None = None) -> Credentials:
    """The keys that sign requests for ``profile``."""
    if is_emulated(profile):
        return _emulator_credentials()
    return load_credentials(environ)


def service_config(profile: Profile, environ: Mapping[str, str] | None = None) -> ServiceConfig:
    """Where the profile's ModelArts is and how to talk to it; a ``ConfigError`` says what is
    missing."""
    from majob.service.rest import ServiceConfig

    env = os.environ if environ is None else environ
    endpoint = env.get("MAJOB_MODELARTS_ENDPOINT") or profile.modelarts_endpoint
    if not endpoint:
        if not profile.region:
            raise ConfigError(
                f"profile {profile.name!r} names no region and no ModelArts endpoint",
                hint="add 'region: cn-north-4' (or modelarts_endpoint) to the profile, or use "
                "--profile emulator with `majob emulator start`",
            )
        endpoint = f"https://modelarts.{profile.region}.myhuaweicloud.com"
    project_id = profile.project_id or env.get("HUAWEICLOUD_SDK_PROJECT_ID")
    if not project_id:
        raise ConfigError(
            f"profile {profile.name!r} has no project_id",
            hint="add 'project_id: ...' to the profile (console: My Credentials > API "
            "Credentials, the project of your region)",
        )
    return ServiceConfig(
        endpoint=str(endpoint).rstrip("/"),
        project_id=project_id,
        credentials=credentials_for(profile, env),
        region=profile.region,
        emulated=is_emulated(profile),
        timeout=_seconds(env, "MAJOB_MODELARTS_TIMEOUT", 30.0),
        create_wait=_seconds(env, "MAJOB_MODELARTS_CREATE_WAIT", ServiceConfig.create_wait),
    )


def _seconds(env: Mapping[str, str], name: str, default: float) -> float:
    text = env.get(name)
    if not text:
        return default
    try:
        seconds = float(text)
    except ValueError:
        raise ConfigError(f"{name}={text!r} is not a number") from None
    if not seconds >= 0:  # also refuses nan
        raise ConfigError(f"{name}={text!r}: give seconds, 0 or more")
    return seconds


def obs_config(profile: Profile, environ: Mapping[str, str] | None = None) -> ObsConfig:
    """How to reach the profile's OBS: its ``obs_endpoint`` and region win over the
    ``MAJOB_OBS_*`` settings; an emulated profile signs with the emulator's keys."""
    overrides: dict[str, object] = {
        "endpoint": profile.obs_endpoint,
        "region": profile.region,
    }
    if is_emulated(profile):
        overrides["credentials"] = _emulator_credentials()
    return ObsConfig.from_env(environ, **overrides)


def open_service(profile: Profile) -> RestTrainingService:
    from majob.service.rest import RestTrainingService

    return RestTrainingService(service_config(profile))


def open_store(profile: Profile) -> ObsObjectStore:
    from majob.storage.obs import ObsObjectStore

    return ObsObjectStore(obs_config(profile))


def console_url(profile: Profile) -> str | None:
    """The console's training-job list of the profile's region (None for the emulator)."""
    if is_emulated(profile) or not profile.region:
        return None
    return CONSOLE.format(region=profile.region)


class ServiceSource:
    """The profile's service, opened on first use and opened afresh after ``reconnect()``: an
    emulator restarted while majob waits may listen on a new port (its state file says)."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self._service: RestTrainingService | None = None

    def __call__(self) -> RestTrainingService:
        if self._service is None:
            try:
                self._service = open_service(self._fresh_profile())
            except ConfigError as error:
                if not is_emulated(self.profile):
                    raise
                # The emulator is down (restarting?): to a waiter, that is a lost connection.
                raise ServiceUnreachable(error.message, hint=error.hint) from None
        return self._service

    def _fresh_profile(self) -> Profile:
        if not is_emulated(self.profile):
            return self.profile
        from majob.spec.profiles import load_profile

        return load_profile(self.profile.name)

    def reconnect(self) -> None:
        if self._service is not None:
            self._service.close()
            self._service = None

    def close(self) -> None:
        self.reconnect()
