"""A local run's identity and record: its id, the digest of the spec it ran, ``record.json``,
and the retention policy applied to the runs beside it once it is written."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import secrets
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from majob.runner.nodes import NodeCommand
from majob.runner.result import RunResult
from majob.runner.runs import Retention, apply_retention
from majob.spec.models import JobSpec


def effective_spec_digest(spec: JobSpec) -> str:
    """sha256 of the canonical JSON of the spec as the run ran it (its stage's overrides and
    ``--nodes`` applied): the same run set-up, the same digest. Not the pipeline's gate digest,
    which leaves the stage overrides out so that every stage checks one spec."""
    canonical = json.dumps(
        spec.as_written().model_dump(mode="json"), sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def new_run_id(spec: JobSpec) -> str:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{spec.name}-{secrets.token_hex(3)}"


def write_record(
    result: RunResult, spec: JobSpec, commands: Sequence[NodeCommand], interpreter: str
) -> None:
    record = {
        "run_id": result.run_id,
        "spec_name": spec.name,
        # The key keeps its documented name (docs/runner.md): readers of record.json rely on it.
        "spec_digest": result.effective_spec_digest,
        "stage": result.stage,
        "status": result.status,
        "started_at": result.started_at,
        "duration_seconds": round(result.duration, 3),
        "python": interpreter,
        "nodes": [
            {
                "name": node.name,
                "exit_code": node.exit_code,
                "argv": list(command.shown or command.argv),
                "log": str(node.log.relative_to(result.run_dir)),
            }
            for node, command in zip(result.nodes, commands, strict=True)
        ],
        "outputs": [asdict(o) for o in result.outputs],
        "copied_to": {k: str(v) for k, v in result.copied_to.items()},
        "output_dirs": {k: str(v) for k, v in result.output_dirs.items()},
        "output_copies": [{**asdict(c), "target": str(c.target)} for c in result.copies],
        "guard": [asdict(f) for f in result.findings],
        "notices": list(result.notices),
    }
    result.record.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def prune_runs(run_dir: Path, retention: Retention | None) -> tuple[str, ...]:
    """Apply the retention policy to the runs beside ``run_dir`` (this one is always kept)."""
    if retention is None:
        return ()
    removed = apply_retention(run_dir.parent, retention, protect=(run_dir.name,))
    return tuple(run.run_id for run in removed)
