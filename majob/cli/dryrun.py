"""What ``majob submit --dry-run`` prints: the stage, its job name and problems, the formal gate,
the stage's folders, the code upload compared with OBS (when OBS can be reached) and the body,
with the values the spec took from the environment masked. Nothing is uploaded or created."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from majob.text import counted, printable

if TYPE_CHECKING:
    from majob.pipeline.digests import Fingerprint
    from majob.pipeline.ledger import Ledger
    from majob.service.submit import SubmitPlan
    from majob.spec.profiles import Profile


def print_dry_run(
    plan: SubmitPlan,
    profile: Profile,
    upload_inputs: bool,
    gate: tuple[Ledger, Fingerprint] | None = None,
) -> None:
    """``gate``: the ledger and the code's fingerprint the formal gate is read from."""
    from majob.compile.common import stage_folder_notes
    from majob.pipeline.gate import formal_gate_line

    gate_line = formal_gate_line(gate[0], plan.spec, gate[1], plan.stage) if gate else ""
    out = typer.echo
    out(f"dry run: nothing is uploaded or created ({plan.stage} stage, job {plan.job_name})")
    for problem in plan.problems:
        out(f"problem: {problem}")
    if gate_line:
        out(gate_line)
    for note in stage_folder_notes(plan.spec, plan.stage):
        out(printable(note))
    if (resume := plan.resume) is not None:
        out(f"resume from {resume.text}: the job starts from {resume.folder}'s checkpoints")
    if plan.spec.code.obs is not None:
        print_code_plan(plan, profile)
    if upload_inputs:
        for name, local, uri in plan.input_uploads():
            out(f"input {name}: {local} -> {uri}")
    out("body (POST /v2/{project_id}/training-jobs):")
    sys.stdout.write(json.dumps(plan.shown_body(), indent=2, ensure_ascii=False) + "\n")


def print_code_plan(plan: SubmitPlan, profile: Profile) -> None:
    """What the code upload would send, compared with OBS when OBS can be reached."""
    from majob.service.connect import open_store
    from majob.storage.sync import make_plan

    out = typer.echo
    code_obs = plan.spec.code.obs
    assert code_obs is not None
    try:
        store = open_store(profile)
        try:
            sync = make_plan(
                store,
                Path(plan.spec.code.dir),
                code_obs,
                ignore=plan.spec.code.ignore,
                delete=True,
                scanned=plan.code_files,
            )
        finally:
            store.close()
    except Exception as error:  # any failure here only means "not compared"
        reason = getattr(error, "message", None) or str(error)
        files = counted(len(plan.code_files), "file")
        out(f"code: {files} for {code_obs} (OBS not compared: {reason})")
        for file in plan.code_files:
            out(f"  {file.rel} ({file.size} bytes)")
        return
    count = f"{len(sync.uploads)} of {counted(len(plan.code_files), 'file')}"
    out(f"code: {count} to upload to {code_obs}")
    for upload in sync.uploads:
        out(f"  {upload.reason:7} {upload.file.rel} ({upload.file.size} bytes)")
    if sync.extraneous:
        out(f"  and {counted(len(sync.extraneous), 'object')} no longer in the code to delete")
