"""What the local stage checks before any node starts: the boot file, the inputs' local
stand-ins, what it cannot reproduce of the image, whether the job targets Ascend.

Found here, a mistake costs one clear error, not N node processes that fail the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from majob.errors import RunnerError
from majob.spec.models import JobSpec


def check_boot_file(spec: JobSpec) -> Path:
    """The boot file must exist and compile."""
    code_dir = Path(spec.code.dir).resolve()
    if not code_dir.is_dir():
        raise RunnerError(
            f"code.dir {code_dir} is not a directory",
            hint="set code.dir in the spec to the directory that holds the training code",
        )
    boot = code_dir / spec.code.boot_file
    if not boot.is_file():
        raise RunnerError(
            f"boot file {spec.code.boot_file!r} not found in {code_dir}",
            hint="fix code.boot_file (a path relative to code.dir)",
        )
    source = boot.read_bytes()
    try:
        compile(source, str(boot), "exec", dont_inherit=True)
    except SyntaxError as error:
        where = f"{boot}:{error.lineno or 0}:{error.offset or 0}"
        raise RunnerError(
            f"{where}: syntax error in the boot file: {error.msg}",
            hint="fix the script; no node was started",
        ) from None
    return boot


def resolve_inputs(spec: JobSpec, overrides: Mapping[str, str | Path]) -> dict[str, Path]:
    """Each input's local stand-in: ``overrides`` (``--input NAME=PATH``) over ``local``."""
    names = [c.name for c in spec.inputs]
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        raise RunnerError(
            f"--input {unknown[0]}: the spec has no input named {unknown[0]!r}",
            hint=f"inputs in the spec: {', '.join(names) or '(none)'}",
        )
    resolved: dict[str, Path] = {}
    for index, channel in enumerate(spec.inputs):
        local = overrides.get(channel.name, channel.local)
        if local is None:
            raise RunnerError(
                f"input {channel.name!r} ({channel.obs}) has no local stand-in for the local stage",
                hint=f"add 'local: path/to/data' to inputs[{index}] in the spec, "
                f"or pass --input {channel.name}=PATH",
            )
        path = Path(local).expanduser().resolve()
        if not path.exists():
            raise RunnerError(
                f"input {channel.name!r}: local path {path} does not exist",
                hint=f"fix inputs[{index}].local or pass --input {channel.name}=PATH",
            )
        resolved[channel.name] = path
    return resolved


def check_volumes(spec: JobSpec) -> None:
    """Each volume needs a stand-in folder for the local stage: the run mounts it in the
    volume's place (``layout.py``)."""
    for index, volume in enumerate(spec.volumes):
        if volume.local is None:
            raise RunnerError(
                f"volume {volume.nfs} (mounted at {volume.mount}) has no local stand-in for the "
                "local stage",
                hint=f"add 'local: path/to/folder' to volumes[{index}] in the spec: a folder "
                "with a sample of what the share holds",
            )
        if not Path(volume.local).is_dir():
            raise RunnerError(
                f"volume {volume.nfs}: local stand-in {volume.local} is not a folder",
                hint=f"fix volumes[{index}].local",
            )


def image_notices(spec: JobSpec, interpreter: str) -> tuple[str, ...]:
    """What the local stage does not reproduce of the spec's image, said before the run starts:
    a custom SWR image is never pulled or run here."""
    if not spec.image.is_custom:
        return ()
    return (
        f"custom image {spec.image.swr} is not used locally: its boot command runs with this "
        f"machine's Python ({interpreter}) and packages; what the image adds (system "
        "libraries, Python packages and version, CUDA, its user) is first tried in the debug "
        "stage",
    )


def wants_npu(spec: JobSpec) -> bool:
    """The spec targets Ascend: an Ascend flavor or engine, or the hccl backend (a run on a host
    without torch_npu then uses the CPU stand-in, ``standin.py``)."""
    backend = spec.distributed.backend if spec.distributed else None
    return spec.is_ascend or backend == "hccl"
