"""A job as the service shows it (the ``Job`` JSON of create, show, terminate and searches,
reference modelarts.md §2.4), and its create body as the state dir keeps it."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from majob.emulator.modelarts.catalog import find_engine, find_flavor
from majob.emulator.modelarts.container import MOUNT
from majob.emulator.modelarts.pools import pool_flavor
from majob.emulator.modelarts.store import JobRecord, now_ms
from majob.masking import MASK

USER_NAME = "majob-emulator"
USER_ID = "00000000000000000000000000000002"  # the emulator's one IAM user (a 32-hex id)


def render_job(job: JobRecord, body: dict[str, Any], upload_period: float) -> dict[str, Any]:
    """``job`` created from ``body``: the body echoed with what the service resolves (channel
    dirs, the flavor's details, annotations) and the job's status."""
    annotations = {"job_template": "Template DL", "key_task": "worker", **job.annotations}
    return {
        "kind": body.get("kind", "job"),
        "metadata": {
            "id": job.id,
            "name": job.name,
            "description": job.description,
            "workspace_id": body.get("metadata", {}).get("workspace_id", "0"),
            "create_time": job.create_time,
            "user_name": USER_NAME,
            "annotations": annotations,
        },
        "status": _status(job),
        "algorithm": _algorithm(dict(body.get("algorithm") or {}), upload_period),
        "spec": _spec(dict(body.get("spec") or {})),
    }


def _status(job: JobRecord) -> dict[str, Any]:
    status: dict[str, Any] = {
        "phase": job.phase,
        "secondary_phase": job.secondary_phase,
        "duration": job_duration(job),
        "tasks": job.tasks if job.start_time else [],
        "task_statuses": job.task_statuses,
        "running_records": job.running_records,  # each run: the first, then each restart
    }
    if job.start_time:
        status["start_time"] = job.start_time
        status["node_count_metrics"] = [[job.start_time, job.node_count]]
    return status


def _algorithm(algorithm: dict[str, Any], upload_period: float) -> dict[str, Any]:
    """Environments as a list of maps; each channel with its ``local_dir``, outputs with how
    they are uploaded."""
    environments = algorithm.get("environments")
    algorithm["environments"] = (
        [environments] if isinstance(environments, dict) else environments or []
    )
    algorithm["engine"] = _engine(dict(algorithm.get("engine") or {}))
    for kind in ("inputs", "outputs"):
        channels = []
        for channel in algorithm.get(kind) or []:
            resolved = {"local_dir": str(MOUNT / kind / f"{channel.get('name')}_0"), **channel}
            if kind == "outputs":
                resolved.setdefault("mode", "upload_periodically")
                resolved.setdefault("period", int(upload_period))
            channels.append(resolved)
        algorithm[kind] = channels
    return algorithm


def _engine(engine: dict[str, Any]) -> dict[str, Any]:
    """A preset engine named by id, or by name and version, with all three resolved."""
    found = find_engine(engine_id=str(engine["engine_id"])) if engine.get("engine_id") else None
    if found is None and engine.get("engine_name") and engine.get("engine_version"):
        found = find_engine(name=engine["engine_name"], version=engine["engine_version"])
    if found is not None:
        engine.update(
            engine_id=found.engine_id,
            engine_name=found.engine_name,
            engine_version=found.engine_version,
        )
    return engine


def _spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The resource with its policy and the flavor's name and details."""
    resource = dict(spec.get("resource") or {})
    flavor = find_flavor(str(resource.get("flavor_id")))
    if flavor is None and resource.get("pool_id"):
        flavor = pool_flavor(str(resource.get("flavor_id")))
    resource.setdefault("node_count", 1)
    resource["policy"] = "regular"
    if flavor is not None:
        resource["flavor_name"] = flavor.item["flavor_name"]
        resource["flavor_detail"] = {
            "flavor_type": flavor.item["flavor_type"],
            "billing": flavor.item["billing"],
            "flavor_info": flavor.item["flavor_info"],
        }
    spec["resource"] = resource
    return spec


def job_duration(job: JobRecord) -> int:
    """Milliseconds the job has run (so far)."""
    if not job.start_time:
        return 0
    return (job.end_time or now_ms()) - job.start_time


def iso_time(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def at_rest(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as the state dir keeps it: each env and hyperparameter value is ``***``.

    They are how a job gets a token, and the state dir is a plain directory on the user's disk
    (the cloud keeps them on its side). After a restart, a job's details show ``***`` for them;
    nothing else reads them then: a job that was running when the emulator stopped is lost."""
    algorithm = body.get("algorithm")
    if not isinstance(algorithm, dict):
        return body
    kept = dict(algorithm)
    environments = algorithm.get("environments")
    if isinstance(environments, dict):  # a map, or a list of maps (as responses echo it)
        kept["environments"] = {name: MASK for name in environments}
    elif isinstance(environments, list):
        kept["environments"] = [
            {name: MASK for name in item} if isinstance(item, dict) else item
            for item in environments
        ]
    parameters = algorithm.get("parameters")
    if isinstance(parameters, list):
        kept["parameters"] = [
            {**item, "value": MASK} if isinstance(item, dict) and "value" in item else item
            for item in parameters
        ]
    return {**body, "algorithm": kept}
