"""A local run's container tree on disk: the code copied with the upload's ignore rules, the
inputs linked to their local stand-ins, empty output, log and /cache dirs, and the guard set up
over them (``layout.py`` computes where each goes)."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from majob.errors import RunnerError
from majob.runner import guard
from majob.runner.layout import ContainerPaths, container_paths
from majob.spec.models import JobSpec
from majob.storage.ignore import walk_files


def copy_code(
    spec: JobSpec,
    target: Path,
    *,
    allow_secrets: bool = False,
    on_withheld: Callable[[str], None] | None = None,
) -> int:
    """Copy the code dir with the upload's ignore rules (files that look like secrets left out
    unless ``allow_secrets``, as the upload does); returns the number of files."""
    source = Path(spec.code.dir).resolve()
    count = 0
    walk = walk_files(
        source, spec.code.ignore, allow_secrets=allow_secrets, on_withheld=on_withheld
    )
    for rel in walk:
        destination = target / rel
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, destination)
        count += 1
    if not (target / spec.code.boot_file).is_file():
        raise RunnerError(
            f"boot file {spec.code.boot_file!r} is left out by the ignore rules "
            "(.gitignore, .majobignore or code.ignore), so ModelArts would not get it either",
            hint="remove the pattern that matches it",
        )
    return count


def stage_inputs(spec: JobSpec, paths: ContainerPaths, sources: Mapping[str, Path]) -> None:
    """Make each ``inputs/<name>_0`` point at its local stand-in (a link: nothing is copied)."""
    for channel in spec.inputs:
        source, target = sources[channel.name], paths.inputs[channel.name]
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            target.symlink_to(source, target_is_directory=True)
        else:
            target.mkdir()
            name = source.name if channel.obs.is_dir else channel.obs.name
            (target / name).symlink_to(source)


def build_tree(
    spec: JobSpec,
    run_dir: Path,
    input_sources: Mapping[str, Path],
    allow_secrets: bool = False,
    on_withheld: Callable[[str], None] | None = None,
) -> tuple[ContainerPaths, guard.GuardSetup]:
    """The run's container tree with the code copied and the inputs linked, and its guard."""
    paths = container_paths(spec, run_dir / "ma-user")
    made = (paths.code_dir, paths.log_dir, *paths.outputs.values(), *paths.caches, run_dir / "logs")
    for directory in made:
        directory.mkdir(parents=True, exist_ok=True)
    copy_code(spec, paths.code_dir, allow_secrets=allow_secrets, on_withheld=on_withheld)
    stage_inputs(spec, paths, input_sources)
    guard_setup = guard.prepare(
        run_dir / "guard",
        run_dir=run_dir,
        paths=paths,
        code_origin=Path(spec.code.dir).resolve(),
        input_origins=input_sources.values(),
        home=Path.home(),
    )
    return paths, guard_setup
