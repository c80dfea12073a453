"""The value types of spec fields, and the base every spec model shares.

A field's type carries its own parsing, JSON Schema and rendering: an ``obs://`` path becomes an
``ObsUri`` (``ObsDir``: a directory, ending in ``/``), a duration like ``1h30m`` becomes seconds,
and a hyperparameter or env value (``Scalar``) keeps its YAML type until ``render_scalar`` turns
it into what ModelArts receives.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    WithJsonSchema,
)

from majob.spec.durations import parse_duration
from majob.storage.uri import ObsUri

# A hyperparameter or env value keeps its YAML type (a bool stays a bool) until it is rendered.
Scalar = StrictBool | StrictInt | StrictFloat | StrictStr

NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
CHANNEL_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"


def render_scalar(value: Scalar) -> str:
    """The string ModelArts receives: ``true``/``false`` for bools, ``repr`` for floats."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _parse_obs(value: object) -> ObsUri:
    if isinstance(value, ObsUri):
        return value
    if not isinstance(value, str):
        raise ValueError(f"an OBS path must be a string like obs://bucket/dir/, not {value!r}")
    return ObsUri.parse(value)


def _parse_obs_dir(value: object) -> ObsUri:
    uri = _parse_obs(value)
    if not uri.is_dir:
        raise ValueError(f"{uri} must be a directory: end it with '/' ({uri.as_dir()})")
    return uri


_OBS_SCHEMA = {"type": "string", "pattern": r"^(obs://|/)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?$"}
_OBS_DIR_SCHEMA = {
    "type": "string",
    "pattern": r"^(obs://|/)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?/$",
}

ObsPath = Annotated[
    ObsUri,
    BeforeValidator(_parse_obs),
    PlainSerializer(lambda u: u.uri, return_type=str),
    WithJsonSchema({**_OBS_SCHEMA, "description": "obs://bucket/path (file or dir/)"}),
]
ObsDir = Annotated[
    ObsUri,
    BeforeValidator(_parse_obs_dir),
    PlainSerializer(lambda u: u.uri, return_type=str),
    WithJsonSchema({**_OBS_DIR_SCHEMA, "description": "obs://bucket/dir/ (ends with '/')"}),
]
Duration = Annotated[
    int,
    BeforeValidator(parse_duration),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 1},
                {"type": "string", "pattern": r"^(\d+[smhd])+$"},
            ],
            "description": "seconds, or e.g. '90s', '10m', '1h30m', '2d'",
        }
    ),
]


class SpecModel(BaseModel):
    """Base of every spec model: frozen, strict about unknown keys."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=False, defer_build=True)
