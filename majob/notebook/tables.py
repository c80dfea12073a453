"""Tables of many values: the ledger's records (``pipeline.history()``) and a list of jobs
(``majob.jobs()``), with the columns ``majob history`` and ``majob list`` print."""

from __future__ import annotations

import datetime

from majob import display
from majob.notebook.blocks import Html, coloured, table
from majob.pipeline.ledger_schema import StageRecords
from majob.pipeline.metrics import summary
from majob.service.base import JobList
from majob.text import counted


def history_html(records: StageRecords) -> str:
    rows = []
    for record in records:
        result = record.effective_result + (" (forced)" if record.override else "")
        metrics = ", ".join(f"{k} {v:g}" for k, v in summary(record.metrics).items())
        rows.append(
            (
                f"#{record.id}",
                record.spec_name,
                record.stage,
                coloured(result),
                record.job_id[:8] or "-",
                display.seconds(record.duration),
                metrics or "-",
                record.reason or record.override or "",
                record.started_at.replace("T", " ").replace("+00:00", "Z"),
            )
        )
    header = ("#", "spec", "stage", "result", "job", "duration", "metrics", "reason", "when")
    return table(f"ledger: {counted(len(records), 'record')}, newest first", header, rows)


def jobs_html(jobs: JobList) -> str:
    rows = [
        (
            Html(f"<code>{job.id[:8]}</code>"),
            job.name,
            coloured(job.phase_label),
            _when(job.create_time),
            display.seconds(job.duration_ms / 1000),
            f"{job.flavor} × {job.node_count}" if job.flavor else "-",
        )
        for job in jobs
    ]
    header = ("id", "name", "phase", "created", "duration", "flavor")
    return table(f"{counted(len(jobs), 'job')}, newest first", header, rows)


def _when(ms: int | None) -> str:
    if not ms:
        return "-"
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")
