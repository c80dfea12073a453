"""Gates between stages, and where a pipeline starts.

A stage's gate is open when the stage before it passed for the same spec and code digests
(local has no gate). When it is closed, the refusal says what changed since that stage last
passed: the files (added, removed, changed) and the spec fields. ``majob submit --stage
formal`` meets the same gate (``override_for``): ``--force --reason`` passes it, and the reason
is kept in the ledger.
"""

from __future__ import annotations

from dataclasses import dataclass

from majob.errors import StageRefused, UserInputError
from majob.pipeline.digests import Fingerprint, changed_fields, changed_files
from majob.pipeline.ledger import Ledger
from majob.pipeline.ledger_schema import StageRecord
from majob.spec.models import STAGES, JobSpec, Stage

PREVIOUS: dict[str, Stage] = {"debug": "local", "formal": "debug"}


def passed_for(
    ledger: Ledger, name: str, stage: str, fingerprint: Fingerprint
) -> StageRecord | None:
    """The newest record of ``stage`` that passed for this code and spec."""
    for record in ledger.records(name, stage=stage):
        if record.passed and fingerprint.matches(record.spec_digest, record.code_digest):
            return record
    return None


def last_passed(ledger: Ledger, name: str, stage: str) -> StageRecord | None:
    """The newest record of ``stage`` that passed, for any code and spec."""
    return next((r for r in ledger.records(name, stage=stage) if r.passed), None)


def changes_since(record: StageRecord, fingerprint: Fingerprint) -> list[str]:
    """What differs from ``record``: ``code: a.py (changed)``, ``spec: hyperparameters.lr``."""
    files = changed_files(record.code_files, fingerprint.code_files)
    fields = changed_fields(dict(record.spec_json), dict(fingerprint.spec_json))
    out = []
    if files:
        out.append("code: " + ", ".join(files))
    if fields:
        out.append("spec: " + ", ".join(fields))
    return out


@dataclass(frozen=True)
class GateState:
    """Whether ``stage`` may run: ``open``, and if not, why (one line)."""

    stage: str
    open: bool
    why: str = ""


def gate(ledger: Ledger, name: str, stage: str, fingerprint: Fingerprint) -> GateState:
    """The gate in front of ``stage``."""
    previous = PREVIOUS.get(stage)
    if previous is None:
        return GateState(stage, True)
    if passed_for(ledger, name, previous, fingerprint) is not None:
        return GateState(stage, True)
    earlier = last_passed(ledger, name, previous)
    if earlier is None:
        return GateState(stage, False, f"the {previous} stage has not passed for {name} yet")
    changes = changes_since(earlier, fingerprint)
    what = "; ".join(changes) or "the digests differ"
    return GateState(
        stage,
        False,
        f"the {previous} stage passed (record #{earlier.id}) for other code or spec; changed "
        f"since: {what}",
    )


@dataclass(frozen=True)
class StagePlan:
    """What a pipeline does with one stage: ``skip`` it (``record`` passed for this code and
    spec) or ``run`` it (``why``: never ran, or what changed since it passed)."""

    stage: Stage
    action: str  # "skip" or "run"
    why: str
    record: StageRecord | None = None


def plan_stages(
    ledger: Ledger, name: str, fingerprint: Fingerprint, *, start: Stage, until: Stage
) -> list[StagePlan]:
    """The stages from ``start`` to ``until``: those that passed for this code and spec are
    skipped, the rest run, in order.

    A passed record is a passed record whoever wrote it (a pipeline, or ``majob submit --stage
    debug --wait``), and whatever ran before it: the same code and spec would only repeat it.
    So a stage is skipped even when an earlier one runs now (local never ran, debug passed by
    hand): the earlier one's failure still stops the pipeline before it."""
    chosen = STAGES[STAGES.index(start) : STAGES.index(until) + 1]
    plans: list[StagePlan] = []
    running = False
    for stage in chosen:
        record = passed_for(ledger, name, stage, fingerprint)
        if record is not None:
            plans.append(
                StagePlan(stage, "skip", f"passed for this code and spec (#{record.id})", record)
            )
            continue
        if running:
            why = "follows the stage before it"
        else:
            earlier = last_passed(ledger, name, stage)
            if earlier is None:
                why = "has not passed yet"
            else:
                why = "changed since it passed: " + (
                    "; ".join(changes_since(earlier, fingerprint)) or "the digests differ"
                )
        running = True
        plans.append(StagePlan(stage, "run", why))
    return plans


# -- the formal gate of a submit by hand (``majob submit --stage formal``) --------------------
# A debug submit is not gated on the local stage: it is the small joint-debug job, cheap by
# design, and ``majob run`` keeps no ledger.


def formal_gate_line(ledger: Ledger, spec: JobSpec, fingerprint: Fingerprint, stage: str) -> str:
    """What a dry run of ``stage`` says about the formal gate ("" for the other stages)."""
    if stage != "formal":
        return ""
    state = gate(ledger, spec.name, "formal", fingerprint)
    if state.open:
        return "formal gate: open (debug passed for this code and spec)"
    return f"formal gate: closed, a submit would be refused: {state.why}"


def override_for(
    ledger: Ledger,
    spec: JobSpec,
    fingerprint: Fingerprint,
    stage: Stage,
    force_reason: str | None,
    spec_file: str,
) -> str:
    """The gate override to record for submitting ``spec`` as ``stage`` ("" when none is
    needed); ``StageRefused`` when the formal gate is closed and no reason was given."""
    if force_reason is not None and not force_reason.strip():
        raise UserInputError("--force needs --reason '...': the override is kept in the ledger")
    if stage != "formal":
        if force_reason is not None:
            raise UserInputError(
                f"--force overrides the formal gate; a {stage} submit has none to override"
            )
        return ""
    state = gate(ledger, spec.name, stage, fingerprint)
    if state.open:
        return ""
    if force_reason is None:
        raise StageRefused(
            f"formal refused for {spec.name}: {state.why}",
            hint=f"pass the debug stage first (majob submit {spec_file} --stage debug --wait, "
            f"or majob pipeline {spec_file}), or override with --force --reason '...' "
            f"(kept in the ledger: {ledger.path})",
        )
    return force_reason.strip()
