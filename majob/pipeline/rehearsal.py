"""A resume rehearsal: kill a local run mid-way, restart it as ModelArts would, and say whether
the script resumed from its checkpoints.

Three local runs of the spec's local stage: the uninterrupted one (the reference; or a passed
earlier run's logs, ``compare_to``), the one a fault kills (``runner/faults.py``), and its
restart. The restart is a new run: the same container layout, fresh scratch, every output empty
except the checkpoint output (``fault_tolerance.checkpoints``), whose files the killed run left
are copied in first, as ModelArts downloads a "Predownload" output into the new containers.
Without ``fault_tolerance.checkpoints`` nothing is carried over: nothing would survive on
ModelArts either. ``resumed.py`` reads the verdict from the three runs' metric series.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from majob.errors import ConfigError, MajobError, RunnerError
from majob.pipeline.metrics import MetricReader, Series
from majob.pipeline.resumed import CHIEF, DEFAULT_TOLERANCE, ResumeVerdict, judge_resume
from majob.runner.faults import FailAt, FaultInjector, parse_fail_at, progress_metric
from majob.runner.layout import ContainerPaths
from majob.runner.local import run_local
from majob.runner.nodes import LineSink
from majob.runner.runs import RUNS_DIR
from majob.spec.models import JobSpec


@dataclass(frozen=True)
class Attempt:
    """One run of the rehearsal: ``label`` says which (uninterrupted, killed, restarted)."""

    label: str
    run_id: str
    status: str
    duration: float
    series: Series


@dataclass(frozen=True)
class RehearsalOptions:
    """How each of the rehearsal's runs runs (as ``run_local`` takes them)."""

    nodes: int | None = None
    python: str | None = None
    timeout: int | None = None
    runs_dir: Path | None = None
    on_line: LineSink | None = None  # each run's lines (default: stdout)
    tolerance: float = DEFAULT_TOLERANCE


@dataclass(frozen=True)
class Rehearsal:
    """What the rehearsal saw. ``fired_after``: seconds into the killed run when the node(s)
    died; ``carried``: the files of ``carried_output`` the restart found (empty: none)."""

    plan: FailAt
    reference: Attempt
    killed: Attempt
    restarted: Attempt
    fired_after: float
    carried_output: str | None
    carried: tuple[str, ...]
    verdict: ResumeVerdict
    reused_reference: bool

    @property
    def passed(self) -> bool:
        """It resumed and ended where the uninterrupted run ended."""
        return self.verdict.resumed is True and self.verdict.final_matches

    @property
    def time_lost(self) -> float:
        """The killed run's time until the kill plus the restart's, over the uninterrupted's."""
        return self.fired_after + self.restarted.duration - self.reference.duration


@dataclass
class _RunTap:
    """The ``prepare_env`` hook of one run: notes its container paths and copies ``seed``
    (output name -> a killed run's output dir) into its outputs before the nodes start."""

    seed: Mapping[str, Path] = field(default_factory=dict)
    paths: ContainerPaths | None = None
    run_id: str = ""

    def __call__(self, spec: JobSpec, paths: ContainerPaths, run_dir: Path) -> dict[str, str]:
        self.paths, self.run_id = paths, run_dir.name
        for name, source in self.seed.items():
            shutil.copytree(source, paths.outputs[name], dirs_exist_ok=True)
        return {}


def check_fail_at(text: str, spec: JobSpec, node: int | None, nodes: int | None) -> None:
    """Say a bad ``--fail-at``/``--node`` before any run starts (``ConfigError``)."""
    count = nodes or spec.at_stage("local").resources.nodes
    if node is not None and not 0 <= node < count:
        raise ConfigError(f"--node {node}: the run has {count} node(s), numbered 0-{count - 1}")
    if text.strip().endswith("%"):
        _percent(text)
        return
    try:
        parse_fail_at(text, spec.metrics, node)
    except ValueError as error:
        raise ConfigError(f"--fail-at {error}") from None


def _percent(text: str) -> float:
    number = text.strip()[:-1]
    try:
        value = float(number)
    except ValueError:
        value = math.nan
    if not 0 < value < 100:
        raise ConfigError(f"--fail-at {text!r}: a share of the run is between 0% and 100%")
    return value / 100


def resolve_fail_at(text: str, spec: JobSpec, node: int | None, reference: Attempt) -> FailAt:
    """``50%``: half of the uninterrupted run's points of the progress metric (half its time
    when the spec has no metrics); any other form as ``parse_fail_at`` reads it."""
    if not text.strip().endswith("%"):
        return parse_fail_at(text, spec.metrics, node)
    share = _percent(text)
    metric = progress_metric(spec.metrics)
    points = len(reference.series.get(CHIEF, {}).get(metric or "", []))
    if metric is not None and points:
        return FailAt(metric=metric, points=max(1, round(points * share)), node=node)
    return FailAt(seconds=max(1, round(reference.duration * share)), node=node)


def rehearse(
    spec: JobSpec,
    fail_at: str,
    *,
    node: int | None = None,
    compare_to: Path | Attempt | None = None,
    options: RehearsalOptions | None = None,
) -> Rehearsal:
    """Run the rehearsal; raises ``RunnerError`` when a run fails for another reason than the
    fault, or the killed run ended before the fault was due. ``compare_to``: a passed earlier
    run as the reference, by its id or directory (its record and logs are read), or as the
    ``Attempt`` its caller already holds (the pipeline's local stage, which just ran it)."""
    opts = options or RehearsalOptions()
    check_fail_at(fail_at, spec, node, opts.nodes)
    if isinstance(compare_to, Path):
        reference = read_reference(spec, compare_to, opts.runs_dir)
    elif compare_to is not None:
        reference = compare_to
    else:
        reference, error = _attempt(spec, "uninterrupted", opts, _RunTap())
        if error is not None:
            raise RunnerError(f"the uninterrupted run failed: {error.message}", hint=error.hint)
    plan = resolve_fail_at(fail_at, spec, node, reference)
    injector = FaultInjector(plan, spec.metrics)
    killed_tap = _RunTap()
    killed, error = _attempt(spec, "killed", opts, killed_tap, injector)
    if injector.fired_after is None or error is None:  # (a kill can reach a run that ended)
        ended = f"it failed first: {error.message}" if error else f"it {killed.status} first"
        raise RunnerError(
            f"the fault ({plan.describe()}) never came: {ended}",
            hint="fail earlier: a smaller --fail-at, e.g. 50%",
        )
    carried = _surviving(spec, killed_tap.paths)
    restarted, error = _attempt(spec, "restarted", opts, _RunTap(seed=carried))
    if error is not None:
        raise RunnerError(f"the restarted run failed: {error.message}", hint=error.hint)
    return Rehearsal(
        plan=plan,
        reference=reference,
        killed=killed,
        restarted=restarted,
        fired_after=injector.fired_after,
        carried_output=spec.fault_tolerance.checkpoint_output,
        carried=tuple(_files(carried)),
        verdict=judge_resume(spec.metrics, reference.series, restarted.series, opts.tolerance),
        reused_reference=compare_to is not None,
    )


def _attempt(
    spec: JobSpec,
    label: str,
    opts: RehearsalOptions,
    tap: _RunTap,
    fault: FaultInjector | None = None,
) -> tuple[Attempt, MajobError | None]:
    """One local run, its series read as it runs; a run that did not pass returns its error."""
    reader = MetricReader(spec.metrics)
    shown = opts.on_line or _print_line

    def sink(line: str) -> None:
        reader.feed(line)
        shown(line)

    started = time.monotonic()
    try:
        result = run_local(
            spec,
            "local",
            nodes=opts.nodes,
            python=opts.python,
            timeout=opts.timeout,
            runs_dir=opts.runs_dir,
            on_line=sink,
            prepare_env=tap,
            fault=fault,
        )
    except RunnerError as error:
        took = time.monotonic() - started
        return Attempt(label, tap.run_id, "failed", took, reader.series), error
    return Attempt(label, result.run_id, result.status, result.duration, reader.series), None


def _print_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _surviving(spec: JobSpec, paths: ContainerPaths | None) -> dict[str, Path]:
    """The killed run's checkpoint output (name -> its dir): what ModelArts would predownload."""
    name = spec.fault_tolerance.checkpoint_output
    if name is None or paths is None:
        return {}
    return {name: paths.outputs[name]}


def _files(carried: Mapping[str, Path]) -> list[str]:
    return [
        f"{name}/{path.relative_to(root).as_posix()}"
        for name, root in carried.items()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    ]


def read_reference(spec: JobSpec, run_id: Path, runs_dir: Path | None) -> Attempt:
    """A passed earlier local run (its id, or its directory) as the uninterrupted reference:
    its record's status and duration, its logs' series."""
    run_dir = run_id if run_id.is_dir() else (runs_dir or Path.cwd() / RUNS_DIR) / run_id
    record_file = run_dir / "record.json"
    if not record_file.is_file():
        raise ConfigError(
            f"--compare-to {run_id}: no run record at {record_file}",
            hint="name a run of `majob runs` (its id) or its directory",
        )
    record = json.loads(record_file.read_text(encoding="utf-8"))
    if record.get("status") != "passed":
        raise ConfigError(
            f"--compare-to {run_id}: that run {record.get('status', 'did not finish')}; "
            "the reference must be a passed run"
        )
    reader = MetricReader(spec.metrics)
    for log in sorted((run_dir / "logs").glob("worker-*.log")):
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            reader.feed(line, node=log.stem)
    duration = float(record.get("duration_seconds", 0.0))
    return Attempt("uninterrupted", run_dir.name, "passed", duration, reader.series)
