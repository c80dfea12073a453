"""What ``--dump`` adds to a run: msprobe's ``config.json``, majob's settings, the nodes' env.

Pure standard library (no msprobe here: the nodes import it, majob only writes its config). The
dump goes into the first output channel, under ``DUMP_DIR``, so it is kept (copied to the
output's ``local``) and, on ModelArts, uploaded with the outputs.
"""

from __future__ import annotations

import json
from pathlib import Path

from majob.errors import ConfigError
from majob.precision.specs import write_spec_record
from majob.runner.layout import ContainerPaths
from majob.spec.models import JobSpec
from majob.spec.precision_spec import Precision
from majob.version import __version__

DUMP_DIR = "precision-dump"
BOOTSTRAP = Path(__file__).with_name("bootstrap.py")
CONFIG_ENV = "MAJOB_PRECISION"
BOOTSTRAP_ENV = "MAJOB_PRECISION_BOOTSTRAP"


def dump_channel(spec: JobSpec) -> str:
    """The output channel the dump goes to: the first one; a spec without outputs cannot dump."""
    if not spec.outputs:
        raise ConfigError(
            f"{spec.name}: --dump writes into an output channel and the spec has none",
            hint="add an `outputs:` entry (e.g. train_url) so the dump is kept",
        )
    return spec.outputs[0].name


def msprobe_config(precision: Precision, dump_path: Path) -> dict[str, object]:
    """msprobe's ``config.json`` for ``PrecisionDebugger(config_path=...)``."""
    task_section: dict[str, object] = {"scope": list(precision.scope), "list": []}
    task_section["data_mode"] = ["all"]
    if precision.task == "statistics":
        task_section["summary_mode"] = "statistics"
    return {
        "task": precision.task,
        "dump_path": str(dump_path),
        "rank": list(precision.ranks),
        "step": list(precision.steps),
        "level": precision.level,
        "seed": precision.seed,
        "is_deterministic": True,
        precision.task: task_section,
    }


def node_settings(precision: Precision) -> dict[str, object]:
    """What the bootstrap reads besides msprobe's config: deterministic mode, and the gradient
    monitor (``gradprobe.py``) when the spec's ``precision.grad`` is set (``--dump grad``)."""
    grad = precision.grad
    return {
        "deterministic": precision.deterministic,
        "grad": None
        if grad is None
        else {
            "steps": list(precision.grad_steps),
            "layers": list(grad.layers),
            "bounds": list(grad.bounds),
        },
    }


def prepare(spec: JobSpec, output_dir: Path, directory: Path) -> dict[str, str]:
    """Write the configuration under ``directory`` (the run's own files); the dump goes to
    ``output_dir/DUMP_DIR``. Returns the variables every node gets."""
    precision = spec.precision or Precision.model_validate({})
    dump_path = output_dir / DUMP_DIR
    write_spec_record(spec, dump_path)  # what `majob compare` shows as A's or B's settings
    directory.mkdir(parents=True, exist_ok=True)
    probe_file = directory / "msprobe-config.json"
    probe_file.write_text(json.dumps(msprobe_config(precision, dump_path), indent=2) + "\n")
    settings = {
        "dump_path": str(dump_path),
        "msprobe_config": str(probe_file),
        "seed": precision.seed,
        "step": list(precision.steps),
        "level": precision.level,
        "majob_version": __version__,  # for the configuration check (config_pack.py)
        **node_settings(precision),
    }
    settings_file = directory / "settings.json"
    settings_file.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return {
        CONFIG_ENV: str(settings_file),
        BOOTSTRAP_ENV: str(BOOTSTRAP),
        # seed_all sets these too, but only for processes started after it; hashing is fixed at
        # interpreter start and cuBLAS reads its workspace setting once.
        "PYTHONHASHSEED": str(precision.seed),
        "CUBLAS_WORKSPACE_CONFIG": ":4096:8",
    }


def for_local_run(spec: JobSpec, paths: ContainerPaths, run_dir: Path) -> dict[str, str]:
    """``run_local(..., prepare_env=for_local_run)``: the dump of a local run goes into its first
    output channel, the configuration into ``<run dir>/precision``."""
    return prepare(spec, paths.outputs[dump_channel(spec)], run_dir / "precision")
