"""A create body checked as the service checks it, and what the executor makes of it.

``check_body`` validates a ``POST /training-jobs`` body the way the reference documents
(modelarts.md §2.3), answers with the documented codes (2753 channels, 2757 code dir, 2758 boot
file, 2763 flavor, an unknown engine) and returns a ``JobPlan``. Every documented shape is taken:
``obs://`` or ``/bucket/path/`` URLs, an engine by id or by name + version, a custom image with a
command, a preset engine in a custom image. ``JobPlan.to_spec`` turns the plan into the
``JobSpec`` the runner's layout functions take, so the emulated container is built by the same
code as the local stage's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from majob.emulator.modelarts import errors
from majob.emulator.modelarts.errors import ModelArtsError, bad_request
from majob.emulator.modelarts.storage import JobStorage
from majob.errors import ObsUriError
from majob.service.catalog import Engine, Flavor, find_engine, find_flavor
from majob.spec.models import JobSpec
from majob.storage.uri import ObsUri

NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CHANNEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
KINDS = ("job",)


@dataclass(frozen=True)
class ChannelPlan:
    name: str
    uri: ObsUri
    access_method: str  # "parameter" or "env"


@dataclass(frozen=True)
class JobPlan:
    """What a job runs, taken from its create body."""

    name: str
    code_dir: ObsUri
    boot_file: str | None  # relative to code_dir
    command: str | None
    engine: Engine | None
    image_url: str | None
    flavor: Flavor
    nodes: int
    parameters: tuple[tuple[str, str], ...]
    inputs: tuple[ChannelPlan, ...]
    outputs: tuple[ChannelPlan, ...]
    environments: Mapping[str, str]
    log_export: ObsUri | None

    @property
    def is_ascend(self) -> bool:
        return self.flavor.flavor_type == "Ascend" or bool(self.engine and self.engine.is_ascend)

    def to_spec(self, code_dir: Path) -> JobSpec:
        """The spec the local stage would run for this job, its code in ``code_dir``."""
        image: dict[str, Any] = {}
        if self.engine is not None:
            image.update(engine=self.engine.engine_name, version=self.engine.engine_version)
        if self.image_url is not None:
            image["swr"] = self.image_url
        if self.command is not None:
            image["command"] = self.command
        data: dict[str, Any] = {
            "name": self.name,
            "code": {
                "dir": str(code_dir),
                # The spec model wants a boot file even for a custom image, whose command starts
                # the job instead; this name is then never run.
                "boot_file": self.boot_file or "command.py",
                "obs": self.code_dir.uri,
            },
            "image": image,
            "resources": {
                "flavor": self.flavor.flavor_id,
                "nodes": self.nodes,
                **({"cards": self.flavor.accelerators} if self.flavor.accelerators else {}),
            },
            "inputs": [_channel(c) for c in self.inputs],
            "outputs": [_channel(c) for c in self.outputs],
            "hyperparameters": dict(self.parameters),
            "env": dict(self.environments),
        }
        return JobSpec.model_validate(data)


def _channel(channel: ChannelPlan) -> dict[str, Any]:
    return {"name": channel.name, "obs": channel.uri.uri, "access_method": channel.access_method}


def _obj(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise bad_request(f"{where} must be an object", f"send {where} as a JSON object")
    return value


def _str(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise bad_request(f"{where} must be a string")
    return value


def _uri(text: str, where: str, code: str) -> ObsUri:
    try:
        return ObsUri.parse(text)
    except ObsUriError as error:
        raise bad_request(
            f"{where}: {error.message}",
            "write the OBS path as /bucket/path/ or obs://bucket/path/",
            code,
        ) from None


def check_body(body: Any, storage: JobStorage | None) -> JobPlan:
    """The plan of a valid body; the service's ``ModelArtsError`` for an invalid one.
    ``storage`` (the fake OBS) lets the code dir and boot file be checked for existence."""
    if not isinstance(body, dict):
        raise bad_request("the request body must be a JSON object (a Job)")
    kind = body.get("kind", "job")
    if kind not in KINDS:
        raise bad_request(f"kind {kind!r} is not supported by the emulator", "use kind 'job'")
    metadata = _obj(body.get("metadata"), "metadata")
    name = _str(metadata.get("name"), "metadata.name")
    if not name or not NAME.match(name):
        raise bad_request(
            f"metadata.name {name!r} is invalid",
            "use 1-64 characters of letters, digits, '-' and '_'",
        )
    description = _str(metadata.get("description"), "metadata.description") or ""
    if len(description) > 256:
        raise bad_request("metadata.description is longer than 256 characters")
    annotations = _obj(metadata.get("annotations"), "metadata.annotations")
    if not all(isinstance(v, str) for v in annotations.values()):
        raise bad_request("metadata.annotations values must be strings")

    algorithm = _obj(body.get("algorithm"), "algorithm")
    if algorithm.get("id") or algorithm.get("subscription_id"):
        raise ModelArtsError(
            404,
            errors.ALGORITHM_NOT_FOUND,
            "algorithm not found: the emulator has no algorithm management",
            "give algorithm.code_dir with boot_file or command instead of an algorithm id",
        )
    engine_body = _obj(algorithm.get("engine"), "algorithm.engine")
    engine, image_url = _engine(engine_body)
    command = _str(algorithm.get("command"), "algorithm.command")
    code_text = _str(algorithm.get("code_dir"), "algorithm.code_dir")
    boot_text = _str(algorithm.get("boot_file"), "algorithm.boot_file")
    if image_url is None and engine is None:
        raise ModelArtsError(
            400,
            errors.BAD_ENGINE,
            "algorithm.engine is missing: give engine_id, engine_name + engine_version, or "
            "image_url",
            "list the engines with GET /v2/{project_id}/training-job-engines",
        )
    if command is not None and "\n" in command:
        raise bad_request("algorithm.command must be one line", "join commands with && or ;")
    if image_url is not None and engine is None and not command:
        raise bad_request(
            "a custom image needs algorithm.command", "set the boot command of the image"
        )
    if not code_text:
        raise ModelArtsError(
            400,
            errors.BAD_CODE_DIR,
            "algorithm.code_dir is missing",
            "give the OBS directory of the training code, e.g. /bucket/code/",
        )
    code_dir = _uri(code_text, "algorithm.code_dir", errors.BAD_CODE_DIR).as_dir()
    if storage is not None and not storage.exists(code_dir):
        raise ModelArtsError(
            400,
            errors.BAD_CODE_DIR,
            f"code directory {code_dir.rest_path} does not exist or is empty",
            "upload the code to that OBS directory first",
        )
    boot_file: str | None = None
    if boot_text is not None:
        boot = _uri(boot_text, "algorithm.boot_file", errors.BAD_BOOT_FILE)
        if boot.bucket != code_dir.bucket or not boot.key.startswith(code_dir.key):
            raise ModelArtsError(
                400,
                errors.BAD_BOOT_FILE,
                f"boot file {boot.rest_path} is not inside the code directory {code_dir.rest_path}",
                "put the boot file under algorithm.code_dir",
            )
        if command is None and not boot.key.endswith(".py"):
            raise ModelArtsError(
                400,
                errors.BAD_BOOT_FILE,
                f"boot file {boot.rest_path} is not a Python file",
                "a preset engine runs a .py boot file",
            )
        if storage is not None and not storage.exists(boot):
            raise ModelArtsError(
                400,
                errors.BAD_BOOT_FILE,
                f"boot file {boot.rest_path} does not exist",
                "upload it, or fix algorithm.boot_file",
            )
        boot_file = boot.key[len(code_dir.key) :]
    elif command is None:
        raise ModelArtsError(
            400,
            errors.BAD_BOOT_FILE,
            "algorithm.boot_file is missing",
            "a preset engine needs a boot file (or give a custom image and a command)",
        )

    parameters = []
    for index, item in enumerate(algorithm.get("parameters") or []):
        item = _obj(item, f"algorithm.parameters[{index}]")
        pname, value = item.get("name"), item.get("value", "")
        if not isinstance(pname, str) or not pname:
            raise bad_request(f"algorithm.parameters[{index}].name is missing")
        parameters.append((pname, value if isinstance(value, str) else str(value)))
    seen: set[str] = set()
    inputs = tuple(_channels(algorithm.get("inputs"), "inputs", seen))
    outputs = tuple(_channels(algorithm.get("outputs"), "outputs", seen))
    for channel in outputs:
        if not channel.uri.is_dir:
            raise ModelArtsError(
                400,
                errors.BAD_CHANNEL,
                f"output {channel.name}: {channel.uri.rest_path} must be a directory (end it "
                "with '/')",
                "write output OBS paths as directories",
            )
    environments = _environments(algorithm.get("environments"))

    spec = _obj(body.get("spec"), "spec")
    resource = _obj(spec.get("resource"), "spec.resource")
    flavor_id = _str(resource.get("flavor_id"), "spec.resource.flavor_id")
    flavor = find_flavor(flavor_id) if flavor_id else None
    if flavor is None:
        raise ModelArtsError(
            400,
            errors.BAD_FLAVOR,
            f"flavor {flavor_id!r} is invalid"
            if flavor_id
            else "spec.resource.flavor_id is missing",
            "list the flavors with GET /v2/{project_id}/training-job-flavors",
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
    log_export = None
    log_body = _obj(spec.get("log_export_path"), "spec.log_export_path")
    log_text = _str(log_body.get("obs_url"), "spec.log_export_path.obs_url")
    if log_text:
        log_export = _uri(log_text, "spec.log_export_path.obs_url", errors.BAD_REQUEST).as_dir()

    return JobPlan(
        name=name,
        code_dir=code_dir,
        boot_file=boot_file,
        command=command,
        engine=engine,
        image_url=image_url,
        flavor=flavor,
        nodes=nodes,
        parameters=tuple(parameters),
        inputs=inputs,
        outputs=outputs,
        environments=environments,
        log_export=log_export,
    )


def _engine(body: dict[str, Any]) -> tuple[Engine | None, str | None]:
    engine_id = _str(body.get("engine_id"), "algorithm.engine.engine_id")
    name = _str(body.get("engine_name"), "algorithm.engine.engine_name")
    version = _str(body.get("engine_version"), "algorithm.engine.engine_version")
    image_url = _str(body.get("image_url"), "algorithm.engine.image_url") or None
    engine = None
    if engine_id:
        engine = find_engine(engine_id=engine_id)
        if engine is None:
            raise ModelArtsError(
                400,
                errors.BAD_ENGINE,
                f"engine {engine_id!r} does not exist",
                "list the engines with GET /v2/{project_id}/training-job-engines",
            )
    elif name:
        if version is None and image_url is not None:
            return None, image_url  # a custom image that names its framework only
        engine = find_engine(name=name, version=version)
        if engine is None:
            raise ModelArtsError(
                400,
                errors.BAD_ENGINE,
                f"engine {name!r} version {version!r} does not exist",
                "list the engines with GET /v2/{project_id}/training-job-engines",
            )
    return engine, image_url


def _channels(items: Any, kind: str, seen: set[str]) -> list[ChannelPlan]:
    if items is None:
        return []
    if not isinstance(items, list):
        raise ModelArtsError(400, errors.BAD_CHANNEL, f"algorithm.{kind} must be a list")
    channels = []
    for index, item in enumerate(items):
        where = f"algorithm.{kind}[{index}]"
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
        channels.append(
            ChannelPlan(name, _uri(url, f"{where}.remote.obs.obs_url", errors.BAD_CHANNEL), access)
        )
    return channels


def _environments(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    # The create body sends a map; responses echo a list of maps: take both.
    maps = value if isinstance(value, list) else [value]
    env: dict[str, str] = {}
    for item in maps:
        if not isinstance(item, dict):
            raise bad_request("algorithm.environments must be a map of names to values")
        for name, text in item.items():
            if not ENV_NAME.match(str(name)):
                raise bad_request(f"algorithm.environments: {name!r} is not a variable name")
            if not isinstance(text, str):
                raise bad_request(f"algorithm.environments.{name} must be a string")
            env[str(name)] = text
    if len(env) > 100:
        raise bad_request("algorithm.environments holds more than 100 variables")
    return env
