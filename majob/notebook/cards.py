"""The cards of one value each: a local run, a ModelArts job, a pipeline stage, a pipeline.

A card is compact on purpose: a pipeline's three stages fit one screen, each with its result
coloured, its duration, its job, why it ran (or why not) and its metrics' last values.
"""

from __future__ import annotations

import contextlib
import html
from pathlib import Path

from majob import display
from majob.errors import UserInputError
from majob.notebook.blocks import GREEN, RED, Html, card, files
from majob.notebook.series import SeriesMap, job_series
from majob.pipeline.results import PipelineResult, StageResult
from majob.runner.result import RunResult
from majob.service.base import Job


def run_result_html(result: RunResult) -> str:
    facts: list[tuple[str, object]] = [
        ("run", result.run_id),
        ("outputs", files([f"{o.channel}/{o.path}" for o in result.outputs])),
        ("logs", str(Path(result.run_dir) / "logs")),
    ]
    return card(
        f"{result.stage} run", result.status, facts, after=f"in {display.seconds(result.duration)}"
    )


def job_html(job: Job) -> str:
    facts: list[tuple[str, object]] = [("id", job.id)]
    if job.secondary_phase and job.secondary_phase != job.phase:
        facts.append(("detail", job.secondary_phase))
    facts.append(("flavor", f"{job.flavor or '-'} × {job.node_count}"))
    failed = job.failed_task()
    if failed is not None:
        facts.append(("failed", f"{failed.task} exited with code {failed.exit_code}"))
    if job.restarts:
        facts.append(("restarts", job.restarts_text()))
    series: SeriesMap = {}
    with contextlib.suppress(UserInputError):  # not in the ledger: shown without metrics
        series = job_series(job)
    when = "in" if job.finished else "for"
    return card(
        f"job {job.name}",
        job.phase,
        facts,
        series,
        after=f"{when} {display.seconds(job.duration_ms / 1000)}",
    )


def stage_result_html(result: StageResult) -> str:
    facts: list[tuple[str, object]] = []
    if result.job_id:
        phase = f" ({result.job.phase})" if result.job is not None else ""
        facts.append(("job", result.job_id + phase))
    if result.reason:
        reason = html.escape(result.reason)
        facts.append(("reason", Html(f"<span style='color:{RED}'>{reason}</span>")))
    if result.why:
        facts.append(("skipped" if result.result == "skipped" else "ran", result.why))
    if result.outputs:
        facts.append(("outputs", files(result.outputs)))
    return card(
        f"{result.stage} stage",
        result.result,
        facts,
        result.series,
        after=f"in {display.seconds(result.duration)}",
    )


def pipeline_result_html(result: PipelineResult) -> str:
    colour = GREEN if result.ok else RED
    head = (
        f"<div style='font-size:13px;text-align:left'><b>{html.escape(result.spec_name)}</b>: "
        f"<span style='color:{colour}'>{html.escape(result.message)}</span></div>"
    )
    return head + "".join(stage_result_html(stage) for stage in result.stages)
