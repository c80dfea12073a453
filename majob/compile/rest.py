"""JobSpec → the body of ``POST /v2/{project_id}/training-jobs`` (ModelArts REST v2).

``to_rest_body(spec, stage)`` is pure and returns plain JSON data with a fixed key order.
The shape is the ``Job`` model of ``huaweicloudsdkmodelarts`` (v1 package, 3.1.219; a test
deserialises every body into it and back). OBS paths are written ``/bucket/path/``, the form of
every OTC API example (reference §2.3, §5); ``boot_file`` is the full ``/bucket/code/train.py``
(API examples and the SDK model's own doc: "/usr/app/boot.py").

Decisions (the same in the SDK compiler, see ``majob.compile.common``):

- Job name per stage: ``formal`` keeps the spec's name, ``debug`` adds ``-debug``, ``local`` adds
  ``-local``; the name is cut so the whole stays within 64 characters.
- ``local`` compiles with the local stage's overrides applied: it is the job the local runner
  emulates, so ``majob compile --stage local`` shows exactly what the script will be given.
- ``spec.auto_stop``: the shorter of ``auto_stop`` and the stage's ``timeout``, rounded up to
  whole hours; absent when neither is set.
- No ``code.obs``: a ``CompileError`` (set code.obs, or a default bucket in the profile).
- Preset engine: ``code_dir`` + ``boot_file`` + ``engine{engine_name, engine_version}``, and
  ``working_dir`` = the code directory in the container. Custom image: ``code_dir`` +
  ``command`` + ``engine{image_url}``, no ``boot_file`` (the command starts the job) and no
  ``working_dir`` (custom-image commands must start in ``/home/ma-user``).
- ``local_code_dir`` is never set: the code stays at ``${MA_JOB_DIR}/<last segment of
  code.obs>``, the layout the local runner reproduces.
- ``image.uid`` has no field in the v2 create body, so it is not sent.
- ``fault_tolerance``: its annotations in ``metadata.annotations`` and the checkpoint output
  marked ``prefetch_to_local`` (``majob.compile.fault_tolerance`` says why that name).
"""

from __future__ import annotations

from typing import Any

from majob.compile.common import (
    auto_stop_hours,
    code_location,
    rendered_env,
    rendered_parameters,
    stage_job_name,
    working_dir,
)
from majob.compile.fault_tolerance import (
    PREDOWNLOAD_FIELD,
    fault_tolerance_annotations,
    is_predownloaded,
)
from majob.spec.models import Channel, JobSpec, Stage


def to_rest_body(spec: JobSpec, stage: Stage = "formal") -> dict[str, Any]:
    """The REST v2 create-training-job body that submits ``spec`` as ``stage``."""
    effective = spec.at_stage(stage)
    code = code_location(effective)

    metadata: dict[str, Any] = {"name": stage_job_name(effective.name, stage)}
    if effective.description:
        metadata["description"] = effective.description
    annotations = fault_tolerance_annotations(effective.fault_tolerance)
    if annotations:
        metadata["annotations"] = annotations

    algorithm: dict[str, Any] = {"code_dir": code.code_dir.rest_path}
    if effective.image.is_custom:
        algorithm["command"] = effective.image.command
        engine = {"image_url": effective.image.swr}
    else:
        algorithm["boot_file"] = code.boot_uri.rest_path
        engine = {
            "engine_name": effective.image.engine,
            "engine_version": effective.image.version,
        }
    cwd = working_dir(effective, code)
    if cwd is not None:
        algorithm["working_dir"] = cwd
    algorithm["engine"] = engine
    algorithm["parameters"] = rendered_parameters(effective)
    algorithm["inputs"] = [_channel(i) for i in effective.inputs]
    algorithm["outputs"] = [
        _channel(o, predownload=is_predownloaded(effective.fault_tolerance, o.name))
        for o in effective.outputs
    ]
    algorithm["environments"] = rendered_env(effective)

    resource: dict[str, Any] = {}
    if effective.resources.flavor is not None:  # none: a dedicated CPU pool
        resource["flavor_id"] = effective.resources.flavor
    resource["node_count"] = effective.resources.nodes
    if effective.resources.pool is not None:
        resource["pool_id"] = effective.resources.pool
    job_spec: dict[str, Any] = {"resource": resource}
    if effective.volumes:
        job_spec["volumes"] = [
            {"nfs": {"nfs_server_path": v.nfs, "local_path": v.mount, "read_only": v.read_only}}
            for v in effective.volumes
        ]
    if effective.log is not None:
        job_spec["log_export_path"] = {"obs_url": effective.log.rest_path}
    hours = auto_stop_hours(spec, stage)
    if hours is not None:
        job_spec["auto_stop"] = {"time_unit": "HOURS", "duration": hours}

    return {"kind": "job", "metadata": metadata, "algorithm": algorithm, "spec": job_spec}


def _channel(channel: Channel, *, predownload: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"name": channel.name}
    if channel.description:
        out["description"] = channel.description
    out["access_method"] = channel.access_method
    out["remote"] = {"obs": {"obs_url": channel.obs.rest_path}}
    if predownload:
        out[PREDOWNLOAD_FIELD] = True
    return out
