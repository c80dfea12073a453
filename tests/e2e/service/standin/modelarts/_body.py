"""The REST v2 create body an ``Estimator`` and its ``fit`` arguments stand for (reference §1.3,
the "likely REST field" column, and §2.3).

``TrainingFiles`` → ``algorithm.code_dir`` and ``boot_file`` (a relative boot file joined to the
code dir, a full ``obs://`` one taken as it is); ``user_image_url``/``user_command`` →
``engine.image_url``/``command`` (with no ``training_files`` the image brings its own code);
``local_code_dir`` → ``algorithm.local_code_dir``; ``OutputData``/``InputData`` ``local_path`` →
the channel's ``local_dir`` (an input's only when it is not a local source), ``access_method`` as
it is; ``pool_id`` → ``spec.resource.pool_id`` (without ``train_instance_type``, no flavor:
a dedicated CPU pool).
"""

from __future__ import annotations

from typing import Any

from modelarts.train_params import InputData, OutputData, TrainingFiles


def rest_path(uri: str) -> str:
    """``obs://bucket/key`` as the API writes it, ``/bucket/key``."""
    if not uri.startswith("obs://"):
        raise ValueError(f"expected an obs:// path, got {uri!r}")
    return "/" + uri[len("obs://") :]


def code_part(files: TrainingFiles | None, image_url: str | None) -> dict[str, Any]:
    if files is None:
        if image_url is None:
            raise ValueError("training_files is required unless user_image_url is given")
        return {}
    code_dir = files.obs_path if not files.code_dir.startswith("obs://") else files.code_dir
    if code_dir is None:
        raise ValueError("a local TrainingFiles.code_dir needs obs_path to upload it to")
    code_dir = code_dir if code_dir.endswith("/") else code_dir + "/"
    part: dict[str, Any] = {"code_dir": rest_path(code_dir)}
    if files.boot_file:
        boot = files.boot_file
        part["boot_file"] = rest_path(boot if boot.startswith("obs://") else code_dir + boot)
    return part


def channel(item: InputData | OutputData, local_dir: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": item.name}
    if local_dir:
        out["local_dir"] = local_dir
    access = getattr(item, "access_method", None)
    if access:
        out["access_method"] = access
    out["remote"] = {"obs": {"obs_url": rest_path(item.obs_path)}}
    return out


def engine_part(
    framework_type: str | None, framework_version: str | None, image_url: str | None
) -> dict[str, Any]:
    engine: dict[str, Any] = {}
    if framework_type:
        engine["engine_name"] = framework_type
    if framework_version:
        engine["engine_version"] = framework_version
    if image_url:
        engine["image_url"] = image_url
    return engine


def resource_part(flavor: str | None, count: int, pool_id: str | None) -> dict[str, Any]:
    resource: dict[str, Any] = {"node_count": count}
    if flavor:
        resource["flavor_id"] = flavor
    if pool_id:
        resource["pool_id"] = pool_id
    return resource
