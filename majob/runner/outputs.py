"""A local run's outputs: what the nodes wrote into each output channel, and its copy to the
channel's ``local`` path."""

from __future__ import annotations

import filecmp
import shutil
from pathlib import Path

from majob.runner.layout import ContainerPaths
from majob.runner.result import OutputCopy, OutputFile
from majob.spec.models import JobSpec


def list_outputs(spec: JobSpec, paths: ContainerPaths) -> list[OutputFile]:
    files = []
    for channel in spec.outputs:
        root = paths.outputs[channel.name]
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = path.relative_to(root).as_posix()
            files.append(OutputFile(channel.name, rel, path.stat().st_size))
    return files


def copy_outputs(
    spec: JobSpec, paths: ContainerPaths, *, overwrite: bool = False
) -> list[OutputCopy]:
    """Copy each output that has a ``local`` path there. A file already there with other
    content is replaced only with ``overwrite`` (a bad run must not silently replace a good
    model); otherwise it is kept and reported. Other files there are never touched."""
    copies = []
    for channel in spec.outputs:
        if channel.local is None:
            continue
        source = paths.outputs[channel.name]
        target = Path(channel.local).expanduser().resolve()
        copied, replaced, kept = [], [], []
        for path in sorted(p for p in source.rglob("*") if p.is_file()):
            rel = path.relative_to(source)
            destination = target / rel
            differs = destination.exists() and not _same_file(path, destination)
            if differs and not (overwrite and destination.is_file()):
                kept.append(rel.as_posix())
                continue
            if differs:
                replaced.append(rel.as_posix())
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)
            copied.append(rel.as_posix())
        copies.append(OutputCopy(channel.name, target, tuple(copied), tuple(replaced), tuple(kept)))
    return copies


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``b`` is a regular file with the same bytes as ``a``."""
    return b.is_file() and filecmp.cmp(a, b, shallow=False)
