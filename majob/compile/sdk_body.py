"""A REST v2 create body → the notebook SDK call that creates the same job.

The notebook backend (``majob.service.notebook``) creates what ``majob submit`` compiled, the
REST body, through ``Estimator(...).fit(...)``. Each body field goes to the Estimator argument
the reference maps it from (modelarts.md §1.2-1.3): ``code_dir``/``boot_file`` →
``TrainingFiles`` (the boot file as its full ``obs://`` path), ``engine`` → ``framework_type``/
``framework_version`` or ``user_image_url``, ``command`` → ``user_command``,
``local_code_dir``/``working_dir`` as they are, channels → ``InputData``/``OutputData`` (their
``local_dir`` as ``local_path``), ``resource`` → ``train_instance_type``/``train_instance_count``/
``pool_id``, ``log_export_path`` → ``log_url``, ``description`` → ``job_description``.

What no Estimator argument carries is listed in the call's ``notes``: ``auto_stop``,
annotations, an input's ``access_method``, an output's ``prefetch_to_local``, an engine given by
id only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from majob.compile.sdk import (
    VOLUMES_NOT_IN_SDK,
    EstimatorCall,
    InputData,
    OutputData,
    SdkValue,
    TrainingFiles,
)
from majob.errors import CompileError


def obs_uri(path: str) -> str:
    """A body's OBS path (``/bucket/key`` or ``obs://bucket/key``) as ``obs://bucket/key``."""
    return path if path.startswith("obs://") else "obs://" + path.lstrip("/")


def estimator_from_body(body: Mapping[str, Any]) -> EstimatorCall:
    """The ``Estimator(...)``/``fit(...)`` arguments that create ``body``'s job."""
    metadata = body.get("metadata") or {}
    algorithm = body.get("algorithm") or {}
    spec = body.get("spec") or {}
    notes: list[str] = []
    estimator: dict[str, SdkValue] = {}
    if algorithm.get("code_dir"):
        boot = algorithm.get("boot_file")
        estimator["training_files"] = TrainingFiles(
            code_dir=obs_uri(str(algorithm["code_dir"])),
            boot_file=obs_uri(str(boot)) if boot else None,
        )
    if algorithm.get("outputs"):
        estimator["outputs"] = [_output(item) for item in algorithm["outputs"]]
    if algorithm.get("parameters"):
        estimator["parameters"] = [
            {"name": str(p["name"]), "value": str(p.get("value", ""))}
            for p in algorithm["parameters"]
        ]
    estimator.update(_engine(algorithm, notes))
    estimator.update(_resource(spec.get("resource") or {}))
    for key in ("local_code_dir", "working_dir"):
        if algorithm.get(key):
            estimator[key] = str(algorithm[key])
    log = (spec.get("log_export_path") or {}).get("obs_url")
    if log:
        estimator["log_url"] = obs_uri(str(log))
    if algorithm.get("environments"):
        estimator["env_variables"] = {str(k): str(v) for k, v in algorithm["environments"].items()}
    if metadata.get("description"):
        estimator["job_description"] = str(metadata["description"])
    fit: dict[str, SdkValue] = {}
    if algorithm.get("inputs"):
        fit["inputs"] = [_input(item, notes) for item in algorithm["inputs"]]
    fit["wait"] = False
    fit["job_name"] = str(metadata.get("name", ""))
    notes += _unsaid(metadata, spec)
    notes += [
        f"output {item.get('name')!r} is to be predownloaded, which OutputData cannot say"
        for item in algorithm.get("outputs") or []
        if item.get("prefetch_to_local")
    ]
    return EstimatorCall(estimator=estimator, fit=fit, notes=tuple(notes))


def _engine(algorithm: Mapping[str, Any], notes: list[str]) -> dict[str, SdkValue]:
    engine = algorithm.get("engine") or {}
    out: dict[str, SdkValue] = {}
    if engine.get("engine_name"):
        out["framework_type"] = str(engine["engine_name"])
    if engine.get("engine_version"):
        out["framework_version"] = str(engine["engine_version"])
    if engine.get("image_url"):
        out["user_image_url"] = str(engine["image_url"])
    if algorithm.get("command"):
        out["user_command"] = str(algorithm["command"])
    if not out and engine.get("engine_id"):
        raise CompileError(
            f"engine {engine['engine_id']!r} is given by id, which the Estimator cannot say",
            hint="give image.engine and image.version",
        )
    return out


def _resource(resource: Mapping[str, Any]) -> dict[str, SdkValue]:
    out: dict[str, SdkValue] = {}
    if resource.get("flavor_id"):
        out["train_instance_type"] = str(resource["flavor_id"])
    out["train_instance_count"] = int(resource.get("node_count") or 1)
    if resource.get("pool_id"):
        out["pool_id"] = str(resource["pool_id"])
    return out


def _obs_url(item: Mapping[str, Any]) -> str:
    return obs_uri(str(((item.get("remote") or {}).get("obs") or {}).get("obs_url", "")))


def _output(item: Mapping[str, Any]) -> OutputData:
    access = item.get("access_method")
    return OutputData(
        obs_path=_obs_url(item),
        name=str(item["name"]),
        local_path=str(item["local_dir"]) if item.get("local_dir") else None,
        access_method=str(access) if access and access != "parameter" else None,
    )


def _input(item: Mapping[str, Any], notes: list[str]) -> InputData:
    if item.get("access_method") == "env":
        notes.append(
            f"input {item['name']!r} wants access_method env, which InputData cannot say; "
            f"it reaches the script as --{item['name']}=<dir>"
        )
    return InputData(
        obs_path=_obs_url(item),
        name=str(item["name"]),
        local_path=str(item["local_dir"]) if item.get("local_dir") else None,
    )


def _unsaid(metadata: Mapping[str, Any], spec: Mapping[str, Any]) -> list[str]:
    notes = []
    if spec.get("volumes"):
        notes.append(VOLUMES_NOT_IN_SDK)
    if spec.get("auto_stop"):
        notes.append("auto_stop has no Estimator argument: the job is not stopped by time")
    for key in metadata.get("annotations") or {}:
        notes.append(f"annotation {key!r} has no Estimator argument")
    return notes
