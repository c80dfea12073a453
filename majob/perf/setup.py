"""What a run's nodes get for step times (every local run) and for ``--perf`` (a profile).

Pure standard library: majob writes the bootstrap's settings and the variables that make the run's
``sitecustomize`` load it (``runner/guard_site.py``); the nodes do the rest. With ``--perf`` the
profile goes into the first output channel under ``PROFILING_DIR`` (``<worker>_<ts>_ascend_pt/``
per node and rank, each with its step file); without it, each node's step file goes into the
run directory (``steps/<worker>/majob_steps_<R>.jsonl``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from majob.errors import ConfigError
from majob.runner.guard import RUN_STEPS_DIR
from majob.runner.layout import ContainerPaths
from majob.spec.models import JobSpec
from majob.spec.perf import Perf

if TYPE_CHECKING:
    from majob.perf.report import Diagnosis

PROFILING_DIR = "profiling"
BOOTSTRAP = Path(__file__).with_name("bootstrap.py")
PROFILER = Path(__file__).with_name("profiler.py")
STEPLOG = Path(__file__).with_name("steplog.py")
CONFIG_ENV = "MAJOB_PERF"
BOOTSTRAP_ENV = "MAJOB_PERF_BOOTSTRAP"

NodeEnvSetup = Callable[[JobSpec, ContainerPaths, Path], Mapping[str, str]]


def perf_block(spec: JobSpec) -> Perf:
    """The spec's ``perf:`` (its stage's, for a stage's spec), else the defaults."""
    return spec.perf or Perf.model_validate({})


def perf_channel(spec: JobSpec) -> str:
    """The output channel a profile goes to: the first; a spec without outputs cannot keep one."""
    if not spec.outputs:
        raise ConfigError(
            f"{spec.name}: --perf writes the profile into an output channel and the spec has none",
            hint="add an `outputs:` entry (e.g. train_url) so the profile is kept",
        )
    return spec.outputs[0].name


def settings(spec: JobSpec, profiling_dir: str | None, steps_dir: str | None) -> dict[str, Any]:
    """The bootstrap's settings: ``profile`` mode when ``profiling_dir`` is given, else steps;
    either way, how often each process says its step time (``step_line_seconds``)."""
    block = perf_block(spec)
    line = {"step_line_seconds": block.step_line_seconds}
    if profiling_dir is not None:
        perf = block.model_dump(mode="json")
        return {"mode": "profile", "profiling_dir": profiling_dir, "perf": perf, **line}
    return {"mode": "steps", "steps_dir": steps_dir, **line}


def _write(directory: Path, values: dict[str, Any]) -> dict[str, str]:
    directory.mkdir(parents=True, exist_ok=True)
    settings_file = directory / "settings.json"
    settings_file.write_text(json.dumps(values, indent=2) + "\n", encoding="utf-8")
    return {CONFIG_ENV: str(settings_file), BOOTSTRAP_ENV: str(BOOTSTRAP)}


def for_local_run(profile: bool, also: NodeEnvSetup | None = None) -> NodeEnvSetup:
    """``run_local(..., prepare_env=...)``: every node records its step times into the run
    directory, or (``profile``) profiles into its first output channel's ``PROFILING_DIR``;
    ``also`` adds another set-up's variables (the precision dump's)."""

    def prepare(spec: JobSpec, paths: ContainerPaths, run_dir: Path) -> Mapping[str, str]:
        env = dict(also(spec, paths, run_dir)) if also is not None else {}
        if profile:
            profiling = paths.outputs[perf_channel(spec)] / PROFILING_DIR
            values = settings(spec, str(profiling), None)
        else:
            values = settings(spec, None, str(run_dir / RUN_STEPS_DIR))
        env.update(_write(run_dir / "perf", values))
        return env

    return prepare


def profiling_dir(output_dirs: Mapping[str, Path]) -> Path | None:
    """A run's profile folder: in its first output channel, if it made one."""
    first = next(iter(output_dirs.values()), None)
    if first is None or not (first / PROFILING_DIR).is_dir():
        return None
    return first / PROFILING_DIR


def local_run_lines(
    run_dir: Path,
    output_dirs: Mapping[str, Path],
    profiled: bool,
    diagnosis: Diagnosis | str | None = None,
) -> list[str]:
    """What ``majob run`` says at its end: the step times; with ``--perf``, where the profile is,
    its diagnosis (``diagnosis``: made by the caller, or why it could not be; None: made here)
    and how to read it whole."""
    from majob.perf.steps import step_time_lines, step_times
    from majob.text import counted

    profile = profiling_dir(output_dirs) if profiled else None
    lines = step_time_lines(step_times([run_dir / RUN_STEPS_DIR, *([profile] if profile else [])]))
    if not profiled:
        return lines
    if profile is None:
        return [*lines, "profile: none was written (did the script import torch?)"]
    folders = sorted(p for p in profile.iterdir() if p.name.endswith("_ascend_pt"))
    partial = [p.name for p in folders if not _complete(p)]
    state = f", {len(partial)} partial: {', '.join(partial)}" if partial else ""
    return [
        *lines,
        f"profile: {counted(len(folders), 'folder')} in {profile}{state}",
        *(f"  {line}" for line in diagnosis_lines(_or_made(diagnosis, profile))),
        f"  the whole table, with msprof-analyze's advisor: majob perf {profile}",
    ]


def quick_diagnosis(profile: Path, label: str | None = None) -> Diagnosis | str:
    """majob's own diagnosis of the profile (the advisor is left to ``majob perf``: it takes
    tens of seconds), or why the profile cannot be read."""
    import tempfile

    from majob.errors import MajobError
    from majob.perf.report import diagnose

    with tempfile.TemporaryDirectory(prefix="majob-perf-") as scratch:
        try:
            return diagnose(label or str(profile), profile, Path(scratch), run_advisor=False)
        except MajobError as error:
            return error.message


def _or_made(diagnosis: Diagnosis | str | None, profile: Path) -> Diagnosis | str:
    return quick_diagnosis(profile) if diagnosis is None else diagnosis


def diagnosis_lines(diagnosis: Diagnosis | str) -> list[str]:
    """The diagnosis in a few lines, or why there is none (the run stands either way)."""
    from majob.perf.report import summary_lines

    if isinstance(diagnosis, str):
        return [f"not diagnosed: {diagnosis}"]
    return summary_lines(diagnosis)


def _complete(folder: Path) -> bool:
    """True when the folder's ``profiler_info_<R>.json`` says its profile is complete."""
    for info in folder.glob("profiler_info_*.json"):
        try:
            return bool(json.loads(info.read_text(encoding="utf-8")).get("complete"))
        except (OSError, ValueError):
            return False
    return False
