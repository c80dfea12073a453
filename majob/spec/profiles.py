"""Per-user defaults: region, project id, default bucket, default flavor.

They live in ``profiles.yaml`` in the user's config dir (``$MAJOB_CONFIG_DIR``, else
``$XDG_CONFIG_HOME/majob``, else ``~/.config/majob``), one mapping per profile::

    default:
      region: cn-north-4
      project_id: 0123456789abcdef
      bucket: my-training-bucket
      flavor: modelarts.vm.cpu.8u

``--profile NAME`` or ``MAJOB_PROFILE`` selects one; without either, ``default`` is used when it
exists. ``emulator`` is built in (unless profiles.yaml defines it): it points every client at the
running ``majob emulator start`` daemon (``majob.emulator.endpoints.running_emulator``).
Secrets never go here: credentials come from the environment or a 0600 credentials file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from majob.errors import ConfigError
from majob.storage.dirs import config_dir
from majob.storage.uri import bucket_name_problem

PROFILE_FILE = "profiles.yaml"


class Profile(BaseModel):
    """Defaults that a spec may leave out."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "default"
    region: str | None = Field(default=None, pattern=r"^[a-z]{2}-[a-z]+-\d+$")
    project_id: str | None = None
    bucket: str | None = None
    flavor: str | None = None
    obs_endpoint: str | None = None  # e.g. the emulator's http://127.0.0.1:PORT
    modelarts_endpoint: str | None = None
    emulated: bool = False  # the emulator's test keys go with it, not the user's credentials


EMULATOR_PROFILE = "emulator"
EMULATOR_BUCKET = "majob-demo"


def emulator_profile(environ: Mapping[str, str] | None = None) -> Profile:
    """The built-in ``emulator`` profile, from the running daemon's state file."""
    from majob.spec.emulator_state import emulator_state_dir, running_emulator

    endpoints = running_emulator(emulator_state_dir(environ))
    return Profile(
        name=EMULATOR_PROFILE,
        region=endpoints.region,
        project_id=endpoints.project_id,
        bucket=EMULATOR_BUCKET,
        obs_endpoint=endpoints.obs,
        modelarts_endpoint=endpoints.modelarts,
        emulated=True,
    )


def load_profile(name: str | None = None, environ: Mapping[str, str] | None = None) -> Profile:
    """The selected profile, or an empty one when none is configured or selected."""
    env = os.environ if environ is None else environ
    wanted = name or env.get("MAJOB_PROFILE") or None
    path = config_dir(env) / PROFILE_FILE
    if not path.exists():
        if wanted == EMULATOR_PROFILE:
            return emulator_profile(env)
        if wanted:
            raise ConfigError(
                f"profile {wanted!r} was asked for, but {path} does not exist",
                hint=f"create {path} with a '{wanted}:' mapping "
                "(region, project_id, bucket, flavor)",
            )
        return Profile(name="default")
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        data = YAML(typ="safe").load(path.read_text(encoding="utf-8")) or {}
    except (OSError, YAMLError) as error:
        raise ConfigError(f"{path}: cannot read profiles: {error}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of profile names to settings")
    selected = wanted or "default"
    if selected not in data:
        if wanted == EMULATOR_PROFILE:
            return emulator_profile(env)
        if wanted:
            known = ", ".join(sorted(map(str, data))) or "none"
            raise ConfigError(f"{path}: no profile {wanted!r} (profiles: {known})")
        return Profile(name="default")
    try:
        profile = Profile.model_validate({**(data[selected] or {}), "name": selected})
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{path}: profile {selected!r}: {field}: {first['msg']}") from None
    if profile.bucket and (problem := bucket_name_problem(profile.bucket)):
        raise ConfigError(f"{path}: profile {selected!r}: {problem}")
    return profile
