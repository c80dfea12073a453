"""The local stage: run a spec's training on this machine, inside an emulation of the container.

``run_local`` checks what it can before any process starts (``checks.py``: boot file, its syntax,
inputs, interpreter), builds the run's tree (``tree.py``, after ``layout.py``: the code copied
with the upload's ignore rules), starts one process per node (``nodes.py``: each in its own
session, their output merged live with a ``[worker-i]`` prefix, a log per node) and stops every
node when one fails, the timeout elapses or the user presses Ctrl-C, or when a node's
``/cache`` (with the inputs) outgrows the flavor's disk (``cachelimit.py``: ModelArts evicts
such a node). Each run leaves a record in ``<runs dir>/<run id>/record.json``
(``record.py``); ``runs dir`` is ``.majob/runs`` under the current directory unless given.
After each run, old runs are removed by the retention policy of ``runs.py``. A passed run
copies its outputs to their ``local`` paths (``outputs.py``), never replacing a file that
differs unless asked to (``overwrite``).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from majob.runner import guard
from majob.runner.cachelimit import cache_capacity, cache_watch
from majob.runner.checks import (
    check_boot_file,
    check_volumes,
    image_notices,
    resolve_inputs,
    wants_npu,
)
from majob.runner.failures import raise_for_status
from majob.runner.faults import FaultInjector
from majob.runner.host import (
    free_port,
    host_environment,
    node_environment,
    resolve_interpreter,
    threads_line,
)
from majob.runner.layout import ContainerPaths, node_command
from majob.runner.nodecache import CacheWatch
from majob.runner.nodes import (
    LineSink,
    LiveOutput,
    Node,
    NodeCommand,
    NodeGroup,
    deferred_interrupts,
)
from majob.runner.outputs import copy_outputs, list_outputs
from majob.runner.record import effective_spec_digest, new_run_id, prune_runs, write_record
from majob.runner.result import NodeResult, RunResult
from majob.runner.runs import RUNS_DIR, Retention
from majob.runner.standin import NpuStandIn, npu_standin_for
from majob.runner.tree import build_tree
from majob.spec.models import JobSpec, Stage
from majob.storage.ignore import withheld_line
from majob.text import counted

# This machine's cloud credentials and OBS settings: a training container has none of them, so a
# script that works here only because it can read them would fail on ModelArts; and the run's
# processes, logs and records must never hold a secret.
HOST_ONLY_ENV_PREFIXES = ("HUAWEICLOUD_SDK_", "MAJOB_OBS_")
START_HINT = "check --python (or MAJOB_PYTHON) names a working interpreter"

# Called once the run's tree is built, with the run's spec, container paths and run dir: the
# variables every node gets on top (e.g. the precision dump's set-up).
NodeEnvSetup = Callable[[JobSpec, ContainerPaths, Path], Mapping[str, str]]


@dataclass(frozen=True)
class _Prepared:
    """A run ready to start: its tree built, each node's command (environment included) known."""

    spec: JobSpec  # the spec as this run runs it
    run_id: str
    run_dir: Path
    paths: ContainerPaths
    guard_setup: guard.GuardSetup
    commands: tuple[NodeCommand, ...]
    interpreter: str
    notices: tuple[str, ...]
    retention: Retention | None
    cache: CacheWatch | None = None  # the nodes' /cache against the flavor's disk


@dataclass(frozen=True)
class _Execution:
    """How the nodes ran; ``interruption``: the Ctrl-C or failed start to raise once recorded."""

    status: str
    failed: Node | None
    started_at: str  # ISO 8601, UTC
    duration: float
    nodes: tuple[NodeResult, ...]
    interruption: BaseException | None
    evicted: str | None = None  # a node's /cache was past its capacity: what ModelArts says


def run_local(
    spec: JobSpec,
    stage: Stage = "local",
    *,
    nodes: int | None = None,
    inputs: Mapping[str, str | Path] | None = None,
    python: str | None = None,
    strict: bool = False,
    timeout: int | None = None,
    runs_dir: Path | None = None,
    on_line: LineSink | None = None,
    overwrite: bool = False,
    allow_secrets: bool = False,
    prepare_env: NodeEnvSetup | None = None,
    run_dir_only: tuple[str, ...] = (),
    fault: FaultInjector | None = None,
    cache_size: int | None = None,
) -> RunResult:
    """Run ``spec`` as ``stage`` (its ``stages.<stage>`` overrides applied) on this machine.

    ``nodes``/``timeout`` override the stage's, ``inputs`` maps input names to local paths over
    their ``local``, ``python`` names the interpreter (default: this one), ``on_line`` receives
    each ``[worker-i]`` output line (default: stdout), ``overwrite`` lets a passed run replace
    files that differ in an output's ``local`` (see ``copy_outputs``), ``allow_secrets`` copies
    files that look like secrets (``.env``, ``id_rsa``...) with the code, ``prepare_env`` adds
    variables for every node once the tree is built (``majob.precision.dumpconfig.
    for_local_run`` records the spec's ``precision:`` dump with msprobe), ``run_dir_only`` names
    output folders (``precision-dump``) that stay in the run directory, never copied to an
    output's ``local``, ``fault`` kills node(s) mid-run (a resume rehearsal), ``cache_size``
    is each node's /cache in bytes (default: the flavor's disk in majob's catalogue). Returns
    the result of a passed run; raises ``NodeFailedError``, ``RunTimeoutError`` or
    ``RunnerError`` (a full /cache; with ``strict``, guard findings) otherwise, after the
    record is written.
    """
    effective = _effective_spec(spec, stage, nodes)
    limit = timeout if timeout is not None else spec.timeout(stage)
    prepared = _prepare(
        effective, inputs or {}, python, runs_dir, allow_secrets, prepare_env, cache_size
    )
    sink = on_line or _print_line
    for notice in prepared.notices:
        sink(f"[majob] {notice}")
    sink(f"[majob] {_starting(prepared)}")
    execution = _execute(prepared, sink, limit, fault)
    said = (*_killed_notice(fault), *([execution.evicted] if execution.evicted else []))
    result = _conclude(prepared, stage, execution, overwrite, run_dir_only, said)
    if execution.interruption is not None:
        raise execution.interruption
    # The error's lines name the files the user edits: the copy's paths become the original's.
    copy_to_origin = (
        str(prepared.paths.code_dir) + os.sep,
        str(Path(effective.code.dir).resolve()) + os.sep,
    )
    raise_for_status(result, execution.failed, limit, strict, copy_to_origin, execution.evicted)
    return result


def _starting(prepared: _Prepared) -> str:
    """Said before the nodes start: a script is silent while Python starts and imports torch
    (seconds, more on a busy machine), and the user should know that the run is under way."""
    spec = prepared.spec
    nodes = counted(len(prepared.commands), "node")
    what = spec.image.command or f"{Path(prepared.interpreter).name} {spec.code.boot_file}"
    return (
        f"run {prepared.run_id}: starting {nodes} ({what}); "
        "the script's output follows once its imports are done"
    )


def _effective_spec(spec: JobSpec, stage: Stage, nodes: int | None) -> JobSpec:
    """The spec as ``stage`` runs it, on ``nodes`` nodes when given."""
    effective = spec.at_stage(stage)
    if nodes is None:
        return effective
    resources = effective.resources.model_copy(update={"nodes": nodes})
    return effective.model_copy(update={"resources": resources})


def _prepare(
    spec: JobSpec,
    inputs: Mapping[str, str | Path],
    python: str | None,
    runs_dir: Path | None,
    allow_secrets: bool,
    prepare_env: NodeEnvSetup | None,
    cache_size: int | None = None,
) -> _Prepared:
    """Every check, then the run's tree and its node commands; no node is started yet."""
    interpreter = resolve_interpreter(python)
    retention = Retention.from_env()  # a bad MAJOB_RUNS_* value is said before anything runs
    # An Ascend job on a host without torch_npu runs on the CPU through majob's stand-in.
    standin = npu_standin_for(wants_npu(spec), interpreter)
    check_boot_file(spec)
    check_volumes(spec)
    input_sources = resolve_inputs(spec, inputs)
    run_id = new_run_id(spec)
    run_dir = (runs_dir or Path.cwd() / RUNS_DIR).resolve() / run_id
    withheld: list[str] = []
    paths, guard_setup = build_tree(spec, run_dir, input_sources, allow_secrets, withheld.append)
    capacity, cache_notices = cache_capacity(spec, cache_size)
    notices = (*image_notices(spec, interpreter), *standin.notices, *cache_notices)
    if withheld:
        notices = (*notices, withheld_line(withheld, "code copy"))
    # A shell inside a run (a test, a nested majob) must not hand its bootstrap to these nodes.
    base_env = host_environment(
        HOST_ONLY_ENV_PREFIXES, drop=(guard.GUARD_ENV, "MAJOB_PERF", "MAJOB_PERF_BOOTSTRAP")
    )
    if prepare_env is not None:
        base_env.update(prepare_env(spec, paths, run_dir))
    commands, threads = _node_commands(
        spec, run_id, paths, guard_setup, interpreter, base_env, standin
    )
    if threads is not None:
        notices = (*notices, threads_line(spec.resources.nodes, threads))
    cache = cache_watch(spec, paths, capacity, tuple(input_sources.values()))
    return _Prepared(
        spec, run_id, run_dir, paths, guard_setup, commands, interpreter, notices, retention, cache
    )


def _node_commands(
    spec: JobSpec,
    run_id: str,
    paths: ContainerPaths,
    guard_setup: guard.GuardSetup,
    interpreter: str,
    base_env: Mapping[str, str],
    standin: NpuStandIn,
) -> tuple[tuple[NodeCommand, ...], str | None]:
    """Each node's command with its whole environment: this shell's, the container's and the
    guard's on top, then on ``PYTHONPATH`` the torch_npu stand-in (when used), the guard and
    ``MA_JOB_DIR`` (as ModelArts sets it)."""
    port = free_port()
    first_on_path = (*standin.pythonpath, str(guard_setup.site_dir), str(paths.job_dir))
    commands, threads = [], None
    for index in range(spec.resources.nodes):
        command = node_command(
            spec,
            paths,
            node=index,
            nodes=spec.resources.nodes,
            run_id=run_id,
            master_port=port,
            python=interpreter,
        )
        container = {**command.env, **guard_setup.env}
        env, threads = node_environment(
            base_env,
            container,
            python=interpreter,
            first_on_path=first_on_path,
            nodes=spec.resources.nodes,
        )
        commands.append(replace(command, env=env))
    return tuple(commands), threads


def _execute(
    prepared: _Prepared, sink: LineSink, limit: int | None, fault: FaultInjector | None
) -> _Execution:
    """Start the nodes and wait until they pass, one fails or the time is up; stop them all
    whatever happened (Ctrl-C and a failed start included). ``fault`` sees every line and
    kills the node(s) it names when due."""
    if fault is not None:
        sink = _watched(sink, fault)
    live = LiveOutput(sink, prepared.spec.from_environ.masker())
    group = NodeGroup(live, start_hint=START_HINT)
    ticks = _Ticks(group, fault, prepared.cache)
    started = time.monotonic()
    started_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    status, failed = "interrupted", None
    interruption: BaseException | None = None
    try:
        for command in prepared.commands:
            group.start(command, prepared.run_dir / "logs" / f"{command.name}.log")
        if fault is not None:
            fault.started = started
        outcome = group.wait(
            deadline=started + limit if limit else None, stop=ticks.stop, tick=ticks
        )
        status, failed = outcome.status, outcome.node
        if ticks.final_look(status) is not None:
            status, failed = "failed", None
    except BaseException as error:  # Ctrl-C (KeyboardInterrupt) or a failed start: record it
        interruption = error
        status = "interrupted" if isinstance(error, KeyboardInterrupt) else "error"
    finally:
        with deferred_interrupts():  # a second Ctrl-C must not cut the clean-up short
            group.stop()
        duration = time.monotonic() - started
    nodes = tuple(NodeResult(n.command.index, n.process.returncode, n.log) for n in group.nodes)
    return _Execution(status, failed, started_at, duration, nodes, interruption, ticks.evicted)


class _Ticks:
    """What runs between two looks at the nodes: the rehearsal's ``fault`` and the ``cache``
    watch, which sets ``stop`` (the nodes are then stopped) once a node is past its /cache."""

    def __init__(self, group: NodeGroup, fault: FaultInjector | None, cache: CacheWatch | None):
        self.group, self.fault, self.cache = group, fault, cache
        self.stop = threading.Event()
        self.evicted: str | None = None

    def __call__(self) -> None:
        if self.fault is not None:
            self.fault.tick(self.group.nodes)
        if self.cache is not None and self.evicted is None:
            self.evicted = self.cache.full()
            if self.evicted is not None:
                self.stop.set()

    def final_look(self, status: str) -> str | None:
        """Once the nodes have exited (a node that filled its /cache and exited at once was
        not seen while it ran): the eviction's text, if any."""
        if self.cache is not None and self.evicted is None and status in ("passed", "failed"):
            self.evicted = self.cache.full(now=True)
        return self.evicted


def _killed_notice(fault: FaultInjector | None) -> tuple[str, ...]:
    """Said in the record of a run a rehearsal killed: its failure was on purpose."""
    if fault is None or fault.fired_after is None:
        return ()
    return (f"resume rehearsal: {fault.plan.describe()} ({fault.fired_after:.1f}s in)",)


def _watched(sink: LineSink, fault: FaultInjector) -> LineSink:
    def feed_then_show(line: str) -> None:
        fault.feed(line)
        sink(line)

    return feed_then_show


def _conclude(
    prepared: _Prepared,
    stage: Stage,
    execution: _Execution,
    overwrite: bool,
    run_dir_only: tuple[str, ...],
    extra_notices: tuple[str, ...] = (),
) -> RunResult:
    """The result: the outputs listed (and copied, when the run passed), the guard's findings;
    written to the record, then older runs pruned."""
    spec, paths = prepared.spec, prepared.paths
    outputs = tuple(list_outputs(spec, paths))
    passed = execution.status == "passed"
    copies = copy_outputs(spec, paths, overwrite=overwrite, skip=run_dir_only) if passed else []
    result = RunResult(
        run_id=prepared.run_id,
        run_dir=prepared.run_dir,
        stage=stage,
        status=execution.status,
        effective_spec_digest=effective_spec_digest(spec),
        started_at=execution.started_at,
        duration=execution.duration,
        nodes=execution.nodes,
        outputs=outputs,
        findings=tuple(guard.findings(prepared.guard_setup.directory)),
        output_dirs=dict(paths.outputs),
        copied_to={c.channel: c.target for c in copies},
        notices=(*prepared.notices, *extra_notices),
        copies=tuple(copies),
    )
    write_record(result, spec, prepared.commands, prepared.interpreter)
    return replace(result, pruned=prune_runs(prepared.run_dir, prepared.retention))


def _print_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
