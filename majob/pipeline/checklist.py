"""``majob checklist``: the migration guide's checklist, each item's status as far as majob can
tell from ``majob check`` (the code), the spec and the ledger, and what to do for the rest.

Statuses: ``done``, ``todo`` (with what to do), ``not needed`` (e.g. DDP for one card) and
``not checked`` (majob cannot tell; the item says how to check it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from majob.errors import MajobError
from majob.migrate.findings import Finding
from majob.pipeline.checklist_item import Item
from majob.pipeline.data_item import data_item
from majob.pipeline.digests import Fingerprint
from majob.pipeline.gate import passed_for
from majob.pipeline.ledger import Ledger
from majob.pipeline.ledger_schema import StageRecord
from majob.pipeline.metrics import summary
from majob.spec.models import STAGES, JobSpec
from majob.text import counted

if TYPE_CHECKING:
    from majob.storage.base import ObjectStore


def _where(findings: Sequence[Finding], limit: int = 3) -> str:
    shown = ", ".join(f"{f.path}:{f.line} {f.rule}" for f in findings[:limit])
    return shown + (f" and {len(findings) - limit} more" if len(findings) > limit else "")


def _findings(spec: JobSpec) -> tuple[list[Finding], int]:
    """``majob check``'s findings in the spec's code, and how many checkpoint saves of it run
    every epoch."""
    from majob.migrate.checker import check_paths
    from majob.migrate.rules import Target

    target = Target.NPU if spec.at_stage("formal").is_ascend else Target.GPU
    root = Path(spec.code.dir)
    output = spec.fault_tolerance.checkpoint_output
    checkpoints = (output, spec.fault_tolerance.checkpoint_folder) if output else None
    reports = check_paths([root], target, checkpoints=checkpoints)
    found = []
    for report in reports:
        for finding in report.findings:
            try:
                shown = Path(finding.path).resolve().relative_to(root.resolve()).as_posix()
            except ValueError:
                shown = finding.path
            found.append(finding._replace(path=shown))
    return found, sum(report.per_epoch_saves for report in reports)


IMAGE_STATUS = {"compatible": "done", "incompatible": "todo", "unchecked": "not checked"}


def _image_item(formal: JobSpec, spec_path: str) -> Item:
    """From ``majob image check-env``'s check (``majob.image.compat``)."""
    from majob.image.compat import check_spec_env

    try:
        result = check_spec_env(formal, spec_path)
    except MajobError as error:  # e.g. the interpreter cannot be probed
        return Item(
            "image", "image compatible", "not checked", error.message, "run `majob image check-env`"
        )
    status = IMAGE_STATUS.get(str(result.verdict), "not checked")
    found = "; ".join([*result.problems, *result.notes]) or str(result.verdict)
    return Item(
        "image",
        "image compatible",
        status,
        f"{result.image}: {found}",
        "" if status == "done" else str(result.advice),
    )


def checklist(
    spec: JobSpec, ledger: Ledger, spec_path: str = "", *, store: ObjectStore | None = None
) -> list[Item]:
    """The checklist of ``spec`` (the formal stage is what must be ready); ``store``: the OBS
    the data plan lists the inputs in (None: that item is not checked)."""
    formal = spec.at_stage("formal")
    findings, saves = _findings(spec)
    code = spec.code.dir
    by_prefix = {
        prefix: [f for f in findings if f.rule.startswith(prefix)]
        for prefix in ("MA1", "MA2", "MA3", "MA4")
    }
    return [
        _paths_item(by_prefix["MA1"], code),
        _image_item(formal, spec_path),
        data_item(formal, ledger, store),
        _ddp_item(formal, by_prefix["MA2"], code),
        _npu_item(formal, by_prefix["MA3"], code),
        _resume_item(formal, by_prefix["MA4"], saves, code),
        _manual_item([f for f in findings if not f.fixable], code),
        *_ledger_items(spec, ledger, spec_path or "SPEC"),
    ]


def _paths_item(paths: Sequence[Finding], code: str) -> Item:
    return Item(
        "paths",
        "paths parameterised",
        "todo" if paths else "done",
        f"{counted(len(paths), 'path finding')}: {_where(paths)}"
        if paths
        else "majob check finds no hard-coded data or output paths",
        f"majob migrate {code} --to cloud-paths --write, then read each input and output "
        "from its --<name> argument"
        if paths
        else "",
    )


def _ddp_item(formal: JobSpec, ddp: Sequence[Finding], code: str) -> Item:
    cards = formal.cards_per_node or 1
    multi = formal.resources.nodes > 1 or cards > 1
    if not multi:
        return Item(
            "ddp",
            "DDP done for multi-card",
            "not needed",
            "the formal stage runs on one node with one card",
        )
    found = f"{counted(len(ddp), 'distributed finding')}: {_where(ddp)}" if ddp else "DDP set up"
    return Item(
        "ddp",
        "DDP done for multi-card",
        "todo" if ddp else "done",
        f"{counted(formal.resources.nodes, 'node')} x {counted(cards, 'card')}; {found}",
        f"majob migrate {code} --to ddp --write" if ddp else "",
    )


def _npu_item(formal: JobSpec, npu: Sequence[Finding], code: str) -> Item:
    if not formal.is_ascend:
        return Item(
            "npu",
            "NPU prepared",
            "not needed",
            f"the formal stage runs on {formal.resources.flavor or formal.resources.pool}, "
            "not on Ascend",
        )
    return Item(
        "npu",
        "NPU prepared",
        "todo" if npu else "done",
        f"{counted(len(npu), 'NPU finding')}: {_where(npu)}" if npu else "no NPU findings",
        f"majob migrate {code} --to npu-auto --write" if npu else "",
    )


def _resume_item(formal: JobSpec, resume: Sequence[Finding], saves: int, code: str) -> Item:
    """A job ModelArts may restart (fault_tolerance.retries) must find its checkpoints again:
    the restart runs on new containers whose outputs start empty. ``saves``: the code's
    checkpoint saves that run every epoch."""
    title = "resumes after a restart"
    tolerance = formal.fault_tolerance
    if not tolerance.retries:
        return Item(
            "resume",
            title,
            "not needed",
            "no fault_tolerance.retries: ModelArts does not restart the job, it fails",
        )
    restarts = counted(tolerance.retries, "restart")
    if tolerance.checkpoint_output is None:
        return Item(
            "resume",
            title,
            "todo",
            f"up to {restarts}, but no fault_tolerance.checkpoints: a restart finds its outputs "
            "empty and trains from the start",
            "set fault_tolerance.checkpoints (e.g. train_url/ckpt/) to the folder the code "
            "saves its checkpoints in",
        )
    where = f"{tolerance.checkpoint_output}/{tolerance.checkpoint_folder}"
    if not saves:
        return Item(
            "resume",
            title,
            "todo",
            f"up to {restarts}, but majob check finds no checkpoint saved every epoch: a "
            "restart trains from the start",
            f"save the model, optimizer and epoch to {where} every epoch (atomically: a "
            "temporary name, then os.replace), and load the latest at start",
        )
    if resume:
        return Item(
            "resume",
            title,
            "todo",
            f"up to {restarts}, checkpoints in {where}; "
            f"{counted(len(resume), 'resume finding')}: {_where(resume)}",
            f"majob migrate {code} --to resume --write, then `majob run SPEC --fail-at 50% "
            "--expect-resume` to see a restart resume",
        )
    return Item(
        "resume",
        title,
        "done",
        f"up to {restarts}; the code saves a checkpoint every epoch in {where} "
        f"({counted(saves, 'save call')}) and loads one at start (majob check: no resume "
        "findings)",
    )


def _manual_item(manual: Sequence[Finding], code: str) -> Item:
    return Item(
        "manual",
        "manual replacements done",
        "todo" if manual else "done",
        f"{counted(len(manual), 'finding')} no codemod fixes: {_where(manual)}"
        if manual
        else "majob check reports nothing left to replace by hand",
        f"edit by hand; `majob check {code}` explains each" if manual else "",
    )


def _ledger_items(spec: JobSpec, ledger: Ledger, spec_path: str) -> list[Item]:
    """The precision check and the staged runs, from what passed for this code and spec; the
    commands to run name ``spec_path``."""
    fingerprint = Fingerprint.of(spec)
    passed = {stage: passed_for(ledger, spec.name, stage, fingerprint) for stage in STAGES}
    debug = passed["debug"]
    seen = ", ".join(f"{k} {v:g}" for k, v in summary(debug.metrics).items()) if debug else ""
    done = [stage for stage in STAGES if passed[stage] is not None]
    missing = [stage for stage in STAGES if passed[stage] is None]
    stages = Item(
        "stages",
        "staged runs passed",
        "done" if not missing else "todo",
        f"passed for this code and spec: {', '.join(done) or 'none'}",
        f"majob pipeline {spec_path} (runs {', '.join(missing)})" if missing else "",
    )
    return [
        _gate_item(spec.name, fingerprint.code_digest, ledger)
        or _precision_item(spec.name, debug, seen, spec_path),
        _perf_item(spec.name, fingerprint.code_digest, ledger, spec_path),
        stages,
    ]


def _perf_item(name: str, code_digest: str, ledger: Ledger, spec_path: str) -> Item:
    """From the perf records of the spec (``perf_records.py``): done when one is of this code."""
    from majob.pipeline.perf_records import perf_records

    title = "performance diagnosed"
    todo = f"majob run {spec_path} --perf (or majob pipeline {spec_path} --perf)"
    records = perf_records(ledger, name, limit=1)
    current = perf_records(ledger, name, code_digest=code_digest, limit=1)
    if current:
        found = current[0]
        return Item(
            "perf",
            title,
            "done",
            f"{found.source} {found.target}: {found.describe()} ({found.recorded_at})",
        )
    if records:
        return Item(
            "perf",
            title,
            "todo",
            f"the last diagnosis ({records[0].recorded_at}, {records[0].stage}) was of other "
            "code: the code changed since",
            todo,
        )
    return Item("perf", title, "todo", "no profile of this spec has been diagnosed", todo)


def _gate_item(name: str, code_digest: str, ledger: Ledger) -> Item | None:
    """From the newest ``expect.precision`` verdict on this code (``precision_gates.py``)."""
    from majob.pipeline.precision_gates import last_gate_verdict

    verdict = last_gate_verdict(ledger, name, code_digest)
    if verdict is None:
        return None
    return Item(
        "precision",
        "precision checked",
        "done" if verdict.passed else "todo",
        f"{verdict.detail} (ledger #{verdict.record_id}, {verdict.recorded_at})",
        ""
        if verdict.passed
        else f"find why {verdict.stage} trains differently: majob run --dump on both, then "
        "majob compare",
    )


def _precision_item(name: str, debug: StageRecord | None, seen: str, spec_path: str) -> Item:
    """From the last ``majob compare`` recorded for the spec (``.majob/precision/``)."""
    from majob.precision.record import last_precision_check

    title = "precision checked"
    check = last_precision_check(name)
    if check is not None:
        problems = "; ".join(check.problems[:3])
        return Item(
            "precision",
            title,
            "done" if check.passed else "todo",
            f"majob compare {check.golden} {check.target}: {check.verdict} ({check.checked_at})"
            + (f": {problems}" if problems and not check.passed else ""),
            "" if check.passed else "find the first diverging API in the compare report and fix it",
        )
    return Item(
        "precision",
        title,
        "not checked",
        (f"the debug stage passed for this code (#{debug.id}, {seen or 'no metrics'})")
        if debug
        else "no debug stage has passed for this code and spec",
        f"majob run {spec_path} --dump on the original and on the migrated code, then majob "
        "compare A B",
    )
