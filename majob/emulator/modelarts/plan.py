"""A create body checked as the service checks it, and what the job then runs.

``check_body`` validates a ``POST /training-jobs`` body the way the reference documents
(modelarts.md §2.3), answers with the documented codes (2753 channels, 2757 code dir, 2758 boot
file, 2763 flavor, an unknown engine) and returns a ``JobPlan``. Every documented shape is taken:
``obs://`` or ``/bucket/path/`` URLs, an engine by id or by name + version, a custom image with a
command, a preset engine in a custom image (``launch.py`` reads which). The executor lays out
the container from the plan (``container.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from majob.emulator.modelarts import errors
from majob.emulator.modelarts.catalog import (
    FakeEngine,
    FakeFlavor,
    find_flavor,
)
from majob.emulator.modelarts.errors import ModelArtsError, bad_request
from majob.emulator.modelarts.jsonbody import obj, obs_path, text
from majob.emulator.modelarts.launch import Launch, read_launch
from majob.emulator.modelarts.placement import Placement, container_path, read_placement
from majob.emulator.modelarts.pools import dedicated_cpu_pool, pool_flavor
from majob.emulator.modelarts.restarts import RestartPolicy
from majob.emulator.modelarts.storage import JobStorage
from majob.emulator.modelarts.volumes import VolumePlan, read_volumes
from majob.storage.uri import ObsUri

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CHANNEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
KINDS = ("job",)
MAX_ENVIRONMENTS = 100


@dataclass(frozen=True)
class ChannelPlan:
    name: str
    uri: ObsUri
    access_method: str  # "parameter" or "env"
    local_dir: PurePosixPath | None = None  # the body's container path for it, if it gives one
    # An output whose files are downloaded into the container before each run starts (the
    # console's "Predownload"; sent as ``prefetch_to_local``): where checkpoints survive restarts.
    predownload: bool = False


@dataclass(frozen=True)
class JobPlan:
    """What a job runs, taken from its create body."""

    name: str
    launch: Launch
    flavor: FakeFlavor
    nodes: int
    parameters: tuple[tuple[str, str], ...]
    inputs: tuple[ChannelPlan, ...]
    outputs: tuple[ChannelPlan, ...]
    environments: Mapping[str, str]
    log_export: ObsUri | None
    placement: Placement = field(default_factory=Placement)
    restart: RestartPolicy = field(default_factory=RestartPolicy)
    volumes: tuple[VolumePlan, ...] = ()

    @property
    def code_dir(self) -> ObsUri | None:
        """None for a custom image that brings its own code."""
        return self.launch.code_dir

    @property
    def engine(self) -> FakeEngine | None:
        return self.launch.engine

    @property
    def is_ascend(self) -> bool:
        return self.flavor.flavor_type == "Ascend" or bool(self.engine and self.engine.is_ascend)


def check_body(body: Any, storage: JobStorage | None) -> JobPlan:
    """The plan of a valid body; the service's ``ModelArtsError`` for an invalid one.
    ``storage`` (the fake OBS) lets the code dir and boot file be checked for existence."""
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object (a Job)")
    kind = body.get("kind", "job")
    if kind not in KINDS:
        raise bad_request(f"kind {kind!r} is not supported by the emulator", "use kind 'job'")
    metadata = obj(body.get("metadata"), "metadata")
    name = _metadata(metadata)
    restart = RestartPolicy.from_annotations(
        obj(metadata.get("annotations"), "metadata.annotations")
    )
    algorithm = obj(body.get("algorithm"), "algorithm")
    launch = read_launch(algorithm, storage)
    parameters = _parameters(algorithm.get("parameters"))
    inputs, outputs = _channels(algorithm)
    environments = _environments(algorithm.get("environments"))
    spec = obj(body.get("spec"), "spec")
    resource = obj(spec.get("resource"), "spec.resource")
    flavor, nodes = _resource(resource, launch.engine)
    volumes = read_volumes(spec, text(resource.get("pool_id"), "spec.resource.pool_id"))
    log_export = _log_export(obj(spec.get("log_export_path"), "spec.log_export_path"))
    if storage is not None:
        _check_buckets(outputs, log_export, storage)
    return JobPlan(
        name=name,
        launch=launch,
        flavor=flavor,
        nodes=nodes,
        parameters=parameters,
        inputs=inputs,
        outputs=outputs,
        environments=environments,
        log_export=log_export,
        placement=read_placement(algorithm),
        restart=restart,
        volumes=volumes,
    )


def _metadata(metadata: dict[str, Any]) -> str:
    """The job's name, once the metadata is checked."""
    name = text(metadata.get("name"), "metadata.name")
    if not name or not NAME.match(name):
        raise bad_request(
            f"metadata.name {name!r} is invalid",
            "use 1-64 characters of letters, digits, '-' and '_'",
        )
    description = text(metadata.get("description"), "metadata.description") or ""
    if len(description) > 256:
        raise bad_request("metadata.description is longer than 256 characters")
    annotations = obj(metadata.get("annotations"), "metadata.annotations")
    if not all(isinstance(v, str) for v in annotations.values()):
        raise bad_request("metadata.annotations values must be strings")
    return name


def _parameters(items: Any) -> tuple[tuple[str, str], ...]:
    """``(name, value)`` pairs; a value that is not a string is sent as its text."""
    parameters = []
    for index, item in enumerate(items or []):
        item = obj(item, f"algorithm.parameters[{index}]")
        name, value = item.get("name"), item.get("value", "")
        if not isinstance(name, str) or not name:
            raise bad_request(f"algorithm.parameters[{index}].name is missing")
        parameters.append((name, value if isinstance(value, str) else str(value)))
    return tuple(parameters)


def _channels(algorithm: dict[str, Any]) -> tuple[tuple[ChannelPlan, ...], tuple[ChannelPlan, ...]]:
    """The inputs and the outputs; one name per channel across both, outputs are dirs."""
    seen: set[str] = set()
    inputs = tuple(_channel_list(algorithm.get("inputs"), "inputs", seen))
    outputs = tuple(_channel_list(algorithm.get("outputs"), "outputs", seen))
    for channel in outputs:
        if not channel.uri.is_dir:
            raise ModelArtsError(
                400,
                errors.BAD_CHANNEL,
                f"output {channel.name}: {channel.uri.rest_path} must be a directory (end it "
                "with '/')",
                "write output OBS paths as directories",
            )
    return inputs, outputs


def _channel_list(items: Any, kind: str, seen: set[str]) -> list[ChannelPlan]:
    if items is None:
        return []
    if not isinstance(items, list):
        raise ModelArtsError(400, errors.BAD_CHANNEL, f"algorithm.{kind} must be a list")
    return [_channel(item, f"algorithm.{kind}[{index}]", seen) for index, item in enumerate(items)]


def _channel(item: Any, where: str, seen: set[str]) -> ChannelPlan:
    if not isinstance(item, dict):
        raise ModelArtsError(400, errors.BAD_CHANNEL, f"{where} must be an object")
    name = item.get("name")
    if not isinstance(name, str) or not CHANNEL.match(name):
        raise ModelArtsError(
            400,
            errors.BAD_CHANNEL,
            f"{where}.name {name!r} is invalid",
            "use letters, digits and '_', starting with a letter or '_'",
        )
    if name in seen:
        raise ModelArtsError(
            400,
            errors.BAD_CHANNEL,
            f"{where}.name {name!r} is used by another input or output",
            "give each input and output its own name",
        )
    seen.add(name)
    remote = item.get("remote")
    obs = remote.get("obs") if isinstance(remote, dict) else None
    url = obs.get("obs_url") if isinstance(obs, dict) else None
    if isinstance(remote, dict) and "dataset" in remote:
        raise ModelArtsError(
            400,
            errors.BAD_CHANNEL,
            f"{where}.remote.dataset: the emulator has no datasets",
            "give remote.obs.obs_url instead",
        )
    if not isinstance(url, str) or not url:
        raise ModelArtsError(
            400,
            errors.BAD_CHANNEL,
            f"{where}.remote.obs.obs_url is missing",
            "give the channel's OBS path, e.g. /bucket/data/",
        )
    access = item.get("access_method", "parameter")
    if access not in ("parameter", "env"):
        raise ModelArtsError(
            400, errors.BAD_CHANNEL, f"{where}.access_method must be 'parameter' or 'env'"
        )
    local_text = text(item.get("local_dir"), f"{where}.local_dir")
    predownload = item.get("prefetch_to_local", False)
    if not isinstance(predownload, bool):
        raise ModelArtsError(
            400, errors.BAD_CHANNEL, f"{where}.prefetch_to_local must be a boolean"
        )
    return ChannelPlan(
        name,
        obs_path(url, f"{where}.remote.obs.obs_url", errors.BAD_CHANNEL),
        access,
        container_path(local_text, f"{where}.local_dir") if local_text else None,
        predownload=predownload and where.startswith("algorithm.outputs"),
    )


def _check_buckets(
    outputs: tuple[ChannelPlan, ...], log_export: ObsUri | None, storage: JobStorage
) -> None:
    """The buckets the job will write to exist: refused now, not when the job ends."""
    for channel in outputs:
        if not storage.bucket_exists(channel.uri.bucket):
            raise ModelArtsError(
                400,
                errors.BAD_CHANNEL,
                f"output {channel.name}: bucket {channel.uri.bucket} does not exist",
                "create the bucket, or write the outputs to a bucket that exists",
            )
    if log_export is not None and not storage.bucket_exists(log_export.bucket):
        raise bad_request(
            f"spec.log_export_path.obs_url: bucket {log_export.bucket} does not exist",
            "create the bucket, or export the logs to a bucket that exists",
        )


def _environments(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    # The create body sends a map; responses echo a list of maps: take both.
    maps = value if isinstance(value, list) else [value]
    env: dict[str, str] = {}
    for item in maps:
        if not isinstance(item, dict):
            raise bad_request("algorithm.environments must be a map of names to values")
        for name, value_text in item.items():
            if not ENV_NAME.match(str(name)):
                raise bad_request(f"algorithm.environments: {name!r} is not a variable name")
            if not isinstance(value_text, str):
                raise bad_request(f"algorithm.environments.{name} must be a string")
            env[str(name)] = value_text
    if len(env) > MAX_ENVIRONMENTS:
        raise bad_request("algorithm.environments holds more than 100 variables")
    return env


def _resource(resource: dict[str, Any], engine: FakeEngine | None) -> tuple[FakeFlavor, int]:
    """The flavor and the node count, checked against each other and the engine. A pool with no
    flavor is a dedicated CPU pool (they take no flavor_id)."""
    flavor_id = text(resource.get("flavor_id"), "spec.resource.flavor_id")
    pool_id = text(resource.get("pool_id"), "spec.resource.pool_id")
    flavor = find_flavor(flavor_id) if flavor_id else None
    if not flavor_id and pool_id:
        flavor = dedicated_cpu_pool(pool_id)
    elif flavor is None and flavor_id and pool_id:
        flavor = pool_flavor(flavor_id)  # a dedicated pool's: any pool_id stands for one
    if flavor is None:
        raise ModelArtsError(
            400,
            errors.BAD_FLAVOR,
            f"flavor {flavor_id!r} is invalid"
            if flavor_id
            else "spec.resource.flavor_id is missing",
            "list the flavors with GET /v2/{project_id}/training-job-flavors (only a dedicated "
            "CPU pool, spec.resource.pool_id, takes none)",
        )
    nodes = resource.get("node_count", 1)
    if not isinstance(nodes, int) or isinstance(nodes, bool) or nodes < 1:
        raise bad_request("spec.resource.node_count must be a positive integer")
    if nodes > flavor.max_num:
        raise ModelArtsError(
            400,
            errors.BAD_FLAVOR,
            f"node_count {nodes} exceeds the maximum {flavor.max_num} of flavor {flavor.flavor_id}",
            f"use at most {flavor.max_num} nodes, or another flavor",
        )
    if engine is not None and engine.is_ascend != (flavor.flavor_type == "Ascend"):
        raise ModelArtsError(
            400,
            errors.BAD_FLAVOR,
            f"engine {engine.engine_name} {engine.engine_version} does not run on flavor "
            f"{flavor.flavor_id} ({flavor.flavor_type})",
            "pair an Ascend engine with an Ascend flavor, others with CPU/GPU flavors",
        )
    return flavor, nodes


def _log_export(log_body: dict[str, Any]) -> ObsUri | None:
    log_text = text(log_body.get("obs_url"), "spec.log_export_path.obs_url")
    if not log_text:
        return None
    return obs_path(log_text, "spec.log_export_path.obs_url", errors.BAD_REQUEST).as_dir()
