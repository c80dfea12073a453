"""How a create body says its job starts: a preset engine running a boot file from the code
dir, a custom image running its command, or a preset engine inside a custom image.

``read_launch`` checks the body's ``algorithm`` part for that as the service does (codes 2755
algorithm, 2757 code dir, 2758 boot file, the emulator's own for an unknown engine) and, when
given the fake OBS, that the code dir and the boot file exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from majob.emulator.modelarts import errors
from majob.emulator.modelarts.catalog import FakeEngine, find_engine
from majob.emulator.modelarts.errors import ModelArtsError, bad_request
from majob.emulator.modelarts.jsonbody import obj, obs_path, text
from majob.emulator.modelarts.storage import JobStorage
from majob.storage.uri import ObsUri

LIST_ENGINES = "list the engines with GET /v2/{project_id}/training-job-engines"


@dataclass(frozen=True)
class Launch:
    """What starts a job. ``boot_file`` is relative to ``code_dir``; with a ``command`` (a custom
    image's) the command starts it instead."""

    engine: FakeEngine | None
    image_url: str | None
    command: str | None
    code_dir: ObsUri
    boot_file: str | None


def read_launch(algorithm: dict[str, Any], storage: JobStorage | None) -> Launch:
    """The launch of a body's ``algorithm``; ``storage`` (the fake OBS) lets the code dir and
    the boot file be checked for existence."""
    if algorithm.get("id") or algorithm.get("subscription_id"):
        raise ModelArtsError(
            404,
            errors.ALGORITHM_NOT_FOUND,
            "algorithm not found: the emulator has no algorithm management",
            "give algorithm.code_dir with boot_file or command instead of an algorithm id",
        )
    engine, image_url = _engine(obj(algorithm.get("engine"), "algorithm.engine"))
    command = text(algorithm.get("command"), "algorithm.command")
    code_text = text(algorithm.get("code_dir"), "algorithm.code_dir")
    boot_text = text(algorithm.get("boot_file"), "algorithm.boot_file")
    _check_image(engine, image_url, command)
    code_dir = _code_dir(code_text, storage)
    boot_file = _boot_file(boot_text, code_dir, command, storage)
    return Launch(engine, image_url, command, code_dir, boot_file)


def _engine(body: dict[str, Any]) -> tuple[FakeEngine | None, str | None]:
    engine_id = text(body.get("engine_id"), "algorithm.engine.engine_id")
    name = text(body.get("engine_name"), "algorithm.engine.engine_name")
    version = text(body.get("engine_version"), "algorithm.engine.engine_version")
    image_url = text(body.get("image_url"), "algorithm.engine.image_url") or None
    engine = None
    if engine_id:
        engine = find_engine(engine_id=engine_id)
        if engine is None:
            raise ModelArtsError(
                400, errors.BAD_ENGINE, f"engine {engine_id!r} does not exist", LIST_ENGINES
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
                LIST_ENGINES,
            )
    return engine, image_url


def _check_image(engine: FakeEngine | None, image_url: str | None, command: str | None) -> None:
    if image_url is None and engine is None:
        raise ModelArtsError(
            400,
            errors.BAD_ENGINE,
            "algorithm.engine is missing: give engine_id, engine_name + engine_version, or "
            "image_url",
            LIST_ENGINES,
        )
    if command is not None and "\n" in command:
        raise bad_request("algorithm.command must be one line", "join commands with && or ;")
    if image_url is not None and engine is None and not command:
        raise bad_request(
            "a custom image needs algorithm.command", "set the boot command of the image"
        )


def _code_dir(code_text: str | None, storage: JobStorage | None) -> ObsUri:
    if not code_text:
        raise ModelArtsError(
            400,
            errors.BAD_CODE_DIR,
            "algorithm.code_dir is missing",
            "give the OBS directory of the training code, e.g. /bucket/code/",
        )
    code_dir = obs_path(code_text, "algorithm.code_dir", errors.BAD_CODE_DIR).as_dir()
    if storage is not None and not storage.exists(code_dir):
        raise ModelArtsError(
            400,
            errors.BAD_CODE_DIR,
            f"code directory {code_dir.rest_path} does not exist or is empty",
            "upload the code to that OBS directory first",
        )
    return code_dir


def _boot_file(
    boot_text: str | None, code_dir: ObsUri, command: str | None, storage: JobStorage | None
) -> str | None:
    """The boot file relative to the code dir; a custom image's command may stand in for it."""
    if boot_text is None:
        if not command:
            raise ModelArtsError(
                400,
                errors.BAD_BOOT_FILE,
                "algorithm.boot_file is missing",
                "a preset engine needs a boot file (or give a custom image and a command)",
            )
        return None
    boot = obs_path(boot_text, "algorithm.boot_file", errors.BAD_BOOT_FILE)
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
    return boot.key[len(code_dir.key) :]
