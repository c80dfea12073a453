"""The local stage: run a spec's training on this machine, inside an emulation of the container.

``run_local`` checks what it can before any process starts (boot file, its syntax, inputs,
interpreter), builds the run's tree (``layout.py``), copies the code with the upload's ignore
rules, starts one process per node in its own session, merges their output live with a
``[worker-i]`` prefix and keeps a log per node. When a node fails, the timeout elapses or the user
presses Ctrl-C, every node's process group is stopped (SIGTERM, then SIGKILL). Each run leaves a
record in ``<runs dir>/<run id>/record.json``; ``runs dir`` is ``.majob/runs`` under the current
directory unless given. After each run, old runs are removed by the retention policy of
``runs.py``. A passed run copies its outputs to their ``local`` paths, never replacing a file that
differs unless asked to (``overwrite``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import filecmp
import hashlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO

from majob import display
from majob.errors import NodeFailedError, RunnerError, RunTimeoutError
from majob.masking import Masker
from majob.migrate.standin import npu_standin_for
from majob.runner import guard
from majob.runner.guard import GuardFinding
from majob.runner.layout import ContainerPaths, NodeCommand, container_paths, node_command
from majob.runner.lines import LINE_LIMIT, Line, LineSplitter
from majob.runner.runs import RUNS_DIR, Retention, apply_retention
from majob.spec.models import JobSpec, Stage
from majob.storage.ignore import walk_files, withheld_line
from majob.text import counted

STOP_GRACE_SECONDS = 3.0  # SIGTERM, then SIGKILL: a failed run is torn down well within 5 s
POLL_SECONDS = 0.02
TAIL_LINES = 15
PIPE_READ = 64 * 1024  # bytes taken from a node's pipe at a time
# Set by launchers such as torchrun; the container has none of them, and a stale one would
# mislead a script that checks them before its --rank/--world_size arguments.
_LAUNCHER_ENV = (
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "TORCHELASTIC_RUN_ID",
    guard.GUARD_ENV,
)
# This machine's cloud credentials and OBS settings: a training container has none of them, so a
# script that works here only because it can read them would fail on ModelArts; and the run's
# processes, logs and records must never hold a secret.
_HOST_ONLY_ENV_PREFIXES = ("HUAWEICLOUD_SDK_", "MAJOB_OBS_")

LineSink = Callable[[str], None]


@dataclass(frozen=True)
class NodeResult:
    """How one node ended: its exit code (negative: killed by that signal) and its log."""

    index: int
    exit_code: int | None
    log: Path

    @property
    def name(self) -> str:
        return f"worker-{self.index}"


@dataclass(frozen=True)
class OutputFile:
    """A file a run wrote into an output channel (``path`` relative to the channel dir)."""

    channel: str
    path: str
    size: int


@dataclass(frozen=True)
class OutputCopy:
    """How one output channel was copied to its ``local`` path (files relative to ``target``).
    ``copied``: files written there (new, replaced or already identical); ``replaced``: those
    that held something else before (only with ``overwrite``); ``kept``: files there that differ
    from the run's and were left alone (without ``overwrite``); the run's own copy is in its
    run directory."""

    channel: str
    target: Path
    copied: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunResult:
    """What a local run did; ``status``: passed, failed, timeout, interrupted or error."""

    run_id: str
    run_dir: Path
    stage: Stage
    status: str
    spec_digest: str
    started_at: str  # ISO 8601, UTC
    duration: float
    nodes: tuple[NodeResult, ...]
    outputs: tuple[OutputFile, ...]
    findings: tuple[GuardFinding, ...]
    output_dirs: Mapping[str, Path] = field(default_factory=dict)
    copied_to: Mapping[str, Path] = field(default_factory=dict)
    notices: tuple[str, ...] = ()  # e.g. that the CPU stand-in for torch_npu was used
    copies: tuple[OutputCopy, ...] = ()
    pruned: tuple[str, ...] = ()  # old runs the retention policy removed after this one

    @property
    def ok(self) -> bool:
        return self.status == "passed"

    def output_dir(self, channel: str) -> Path:
        """The run's own copy of an output channel (``outputs/<name>_0``)."""
        return self.output_dirs[channel]

    @property
    def record(self) -> Path:
        return self.run_dir / "record.json"

    def __repr__(self) -> str:  # short: the default was a 64-character digest and full paths
        return (
            f"<RunResult {self.stage} {self.status} in {display.seconds(self.duration)}, "
            f"{counted(len(self.nodes), 'node')}, {counted(len(self.outputs), 'output file')}, "
            f"run {self.run_id}>"
        )

    def _repr_html_(self) -> str | None:
        return display.html(self)


def spec_digest(spec: JobSpec) -> str:
    """sha256 of the spec's canonical JSON: the same spec, the same digest."""
    canonical = json.dumps(
        spec.as_written().model_dump(mode="json"), sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def new_run_id(spec: JobSpec) -> str:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{stamp}-{spec.name}-{secrets.token_hex(3)}"


def free_port() -> int:
    """A TCP port nobody listens on now (the OS picks it; node 0 binds it soon after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# -- checks before anything starts -------------------------------------------------------------


def resolve_interpreter(python: str | None) -> str:
    """The interpreter the nodes run: ``python`` (a path or a name on PATH), else this one."""
    if python is None:
        return sys.executable
    found = shutil.which(python)
    if found is None:
        raise RunnerError(
            f"interpreter {python!r} not found or not executable",
            hint="pass --python with the path of a python executable, e.g. .venv/bin/python",
        )
    return os.path.abspath(found)


def check_boot_file(spec: JobSpec) -> Path:
    """The boot file must exist and compile; found here, not after N processes started."""
    code_dir = Path(spec.code.dir).resolve()
    if not code_dir.is_dir():
        raise RunnerError(
            f"code.dir {code_dir} is not a directory",
            hint="set code.dir in the spec to the directory that holds the training code",
        )
    boot = code_dir / spec.code.boot_file
    if not boot.is_file():
        raise RunnerError(
            f"boot file {spec.code.boot_file!r} not found in {code_dir}",
            hint="fix code.boot_file (a path relative to code.dir)",
        )
    source = boot.read_bytes()
    try:
        compile(source, str(boot), "exec", dont_inherit=True)
    except SyntaxError as error:
        where = f"{boot}:{error.lineno or 0}:{error.offset or 0}"
        raise RunnerError(
            f"{where}: syntax error in the boot file: {error.msg}",
            hint="fix the script; no node was started",
        ) from None
    return boot


def resolve_inputs(spec: JobSpec, overrides: Mapping[str, str | Path]) -> dict[str, Path]:
    """Each input's local stand-in: ``overrides`` (``--input NAME=PATH``) over ``local``."""
    names = [c.name for c in spec.inputs]
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        raise RunnerError(
            f"--input {unknown[0]}: the spec has no input named {unknown[0]!r}",
            hint=f"inputs in the spec: {', '.join(names) or '(none)'}",
        )
    resolved: dict[str, Path] = {}
    for index, channel in enumerate(spec.inputs):
        local = overrides.get(channel.name, channel.local)
        if local is None:
            raise RunnerError(
                f"input {channel.name!r} ({channel.obs}) has no local stand-in for the local stage",
                hint=f"add 'local: path/to/data' to inputs[{index}] in the spec, "
                f"or pass --input {channel.name}=PATH",
            )
        path = Path(local).expanduser().resolve()
        if not path.exists():
            raise RunnerError(
                f"input {channel.name!r}: local path {path} does not exist",
                hint=f"fix inputs[{index}].local or pass --input {channel.name}=PATH",
            )
        resolved[channel.name] = path
    return resolved


def image_notices(spec: JobSpec, interpreter: str) -> tuple[str, ...]:
    """What the local stage does not reproduce of the spec's image, said before the run starts:
    a custom SWR image is never pulled or run here."""
    if not spec.image.is_custom:
        return ()
    return (
        f"custom image {spec.image.swr} is not used locally: its boot command runs with this "
        f"machine's Python ({interpreter}) and packages; what the image adds (system "
        "libraries, Python packages and version, CUDA, its user) is first tried in the debug "
        "stage",
    )


# -- building the tree -------------------------------------------------------------------------


def copy_code(
    spec: JobSpec,
    target: Path,
    *,
    allow_secrets: bool = False,
    on_withheld: Callable[[str], None] | None = None,
) -> int:
    """Copy the code dir with the upload's ignore rules (files that look like secrets left out
    unless ``allow_secrets``, as the upload does); returns the number of files."""
    source = Path(spec.code.dir).resolve()
    count = 0
    walk = walk_files(
        source, spec.code.ignore, allow_secrets=allow_secrets, on_withheld=on_withheld
    )
    for rel in walk:
        destination = target / rel
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / rel, destination)
        count += 1
    if not (target / spec.code.boot_file).is_file():
        raise RunnerError(
            f"boot file {spec.code.boot_file!r} is left out by the ignore rules "
            "(.gitignore, .majobignore or code.ignore), so ModelArts would not get it either",
            hint="remove the pattern that matches it",
        )
    return count


def stage_inputs(spec: JobSpec, paths: ContainerPaths, sources: Mapping[str, Path]) -> None:
    """Make each ``inputs/<name>_0`` point at its local stand-in (a link: nothing is copied)."""
    for channel in spec.inputs:
        source, target = sources[channel.name], paths.inputs[channel.name]
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            target.symlink_to(source, target_is_directory=True)
        else:
            target.mkdir()
            name = source.name if channel.obs.is_dir else channel.obs.name
            (target / name).symlink_to(source)


def list_outputs(spec: JobSpec, paths: ContainerPaths) -> list[OutputFile]:
    files = []
    for channel in spec.outputs:
        root = paths.outputs[channel.name]
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = path.relative_to(root).as_posix()
            files.append(OutputFile(channel.name, rel, path.stat().st_size))
    return files


def copy_outputs(
    spec: JobSpec, paths: ContainerPaths, *, overwrite: bool = False
) -> list[OutputCopy]:
    """Copy each output that has a ``local`` path there. A file already there with other
    content is replaced only with ``overwrite`` (a bad run must not silently replace a good
    model); otherwise it is kept and reported. Other files there are never touched."""
    copies = []
    for channel in spec.outputs:
        if channel.local is None:
            continue
        source = paths.outputs[channel.name]
        target = Path(channel.local).expanduser().resolve()
        copied, replaced, kept = [], [], []
        for path in sorted(p for p in source.rglob("*") if p.is_file()):
            rel = path.relative_to(source)
            destination = target / rel
            differs = destination.exists() and not _same_file(path, destination)
            if differs and not (overwrite and destination.is_file()):
                kept.append(rel.as_posix())
                continue
            if differs:
                replaced.append(rel.as_posix())
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)
            copied.append(rel.as_posix())
        copies.append(OutputCopy(channel.name, target, tuple(copied), tuple(replaced), tuple(kept)))
    return copies


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``b`` is a regular file with the same bytes as ``a``."""
    return b.is_file() and filecmp.cmp(a, b, shallow=False)


# -- processes ---------------------------------------------------------------------------------


class _Node:
    """One running node: its process (leader of its own session), log file and output reader."""

    def __init__(
        self,
        command: NodeCommand,
        log: Path,
        sink: LineSink,
        lock: threading.Lock,
        redactor: Masker | None = None,
    ):
        self.command = command
        self.redactor = redactor or Masker()
        self.log = log
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._log_file: IO[bytes] = log.open("ab")
        try:
            self.process = subprocess.Popen(
                command.argv,
                cwd=command.cwd,
                env=dict(command.env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as error:
            self._log_file.close()
            raise RunnerError(
                f"{command.name} could not start {command.argv[0]}: {error.strerror}",
                hint="check --python (or MAJOB_PYTHON) names a working interpreter",
            ) from None
        self._reader = threading.Thread(target=self._pump, args=(sink, lock), daemon=True)
        self._reader.start()

    def _pump(self, sink: LineSink, lock: threading.Lock) -> None:
        stream = self.process.stdout
        assert stream is not None
        # Keep a masked value's length past the limit, so a value the cut falls into is still
        # seen whole (and masked) before the line is cut.
        overlap = max((len(v.encode()) for v in self.redactor.values), default=0)
        splitter = LineSplitter(LINE_LIMIT + overlap)
        # os.read returns what the pipe holds (at most PIPE_READ) without waiting for more.
        while chunk := os.read(stream.fileno(), PIPE_READ):
            for line in splitter.feed(chunk):
                self._emit(line, sink, lock)
        for line in splitter.close():
            self._emit(line, sink, lock)

    def _emit(self, line: Line, sink: LineSink, lock: threading.Lock) -> None:
        # A value the spec took from the environment is masked before it is kept or shown.
        data = self.redactor.raw(line.data)
        dropped = line.dropped + max(0, len(data) - LINE_LIMIT)
        data = data[:LINE_LIMIT]
        mark = f" [majob: line truncated, {dropped} more bytes not kept]" if dropped else ""
        self._log_file.write(data + mark.encode() + line.end)
        self._log_file.flush()
        if not data and line.end == b"\r":
            return  # a bare redraw: the log keeps it, the terminal has nothing to show
        text = data.decode("utf-8", errors="replace") + mark
        self.tail.append(text)
        # A sink that fails (a closed terminal) must not stop the draining of the pipe: the
        # node would block on a full pipe.
        with lock, contextlib.suppress(Exception):
            sink(f"[{self.command.name}] {text}")

    def signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone
            os.killpg(self.process.pid, signum)

    def _wait_group_gone(self, timeout: float = 1.0) -> None:
        """A signal is delivered asynchronously: wait (briefly) until no member of the group is
        left, so that "the run is over" means "no process of it is left"."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                os.killpg(self.process.pid, 0)
            except (ProcessLookupError, PermissionError):
                return
            time.sleep(0.01)

    def finish(self) -> None:
        """Sweep what is left of the group (a container ends with its boot process), then
        wait for the output reader and close the log."""
        self.signal_group(signal.SIGKILL)
        self._wait_group_gone()
        self._reader.join(timeout=5)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._log_file.close()


def _stop(nodes: list[_Node]) -> None:
    """SIGTERM every running node's group, SIGKILL what is still there after the grace period."""
    running = [n for n in nodes if n.process.poll() is None]
    for node in running:
        node.signal_group(signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for node in running:
        try:
            node.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            node.signal_group(signal.SIGKILL)
            node.process.wait()


def _wait(nodes: list[_Node], deadline: float | None) -> tuple[str, _Node | None]:
    """Until every node exits 0 (``passed``), one fails (``failed``, that node) or the deadline
    passes (``timeout``)."""
    while True:
        failed = [n for n in nodes if n.process.poll() not in (None, 0)]
        if failed:
            return "failed", failed[0]
        if all(n.process.returncode == 0 for n in nodes):
            return "passed", None
        if deadline is not None and time.monotonic() > deadline:
            return "timeout", None
        time.sleep(POLL_SECONDS)


@contextlib.contextmanager
def _deferred_interrupts() -> Iterator[None]:
    """Ignore SIGINT/SIGTERM for the duration (main thread only; elsewhere they cannot arrive
    as exceptions anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            # None: a handler installed outside Python; the default is the closest we can restore.
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def _print_line(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


# -- the run -----------------------------------------------------------------------------------


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
    dump: bool = False,
) -> RunResult:
    """Run ``spec`` as ``stage`` (its ``stages.<stage>`` overrides applied) on this machine.

    ``nodes``/``timeout`` override the stage's, ``inputs`` maps input names to local paths over
    their ``local``, ``python`` names the interpreter (default: this one), ``on_line`` receives
    each ``[worker-i]`` output line (default: stdout), ``overwrite`` lets a passed run replace
    files that differ in an output's ``local`` (see ``copy_outputs``), ``allow_secrets`` copies
    files that look like secrets (``.env``, ``id_rsa``...) with the code, ``dump`` records the
    spec's ``precision:`` dump with msprobe (``majob.precision``). Returns the result of a
    passed run; raises ``NodeFailedError``, ``RunTimeoutError`` or (with ``strict`` and guard
    findings) ``RunnerError`` otherwise, after the record is written.
    """
    effective = spec.at_stage(stage)
    if nodes is not None:
        effective = effective.model_copy(
            update={"resources": effective.resources.model_copy(update={"nodes": nodes})}
        )
    node_count = effective.resources.nodes
    limit = timeout if timeout is not None else spec.timeout(stage)
    interpreter = resolve_interpreter(python)
    retention = Retention.from_env()  # a bad MAJOB_RUNS_* value is said before anything runs
    # An Ascend job on a host without torch_npu runs on the CPU through majob's stand-in.
    standin = npu_standin_for(effective, interpreter)
    check_boot_file(effective)
    input_sources = resolve_inputs(effective, inputs or {})

    run_id = new_run_id(effective)
    run_dir = (runs_dir or Path.cwd() / RUNS_DIR).resolve() / run_id
    withheld: list[str] = []
    paths, guard_setup = _build_tree(
        effective, run_dir, input_sources, allow_secrets, withheld.append
    )
    notices = (*image_notices(effective, interpreter), *standin.notices)
    if withheld:
        notices = (*notices, withheld_line(withheld, "code copy"))
    port = free_port()
    commands = [
        node_command(
            effective,
            paths,
            node=i,
            nodes=node_count,
            run_id=run_id,
            master_port=port,
            python=interpreter,
        )
        for i in range(node_count)
    ]
    base_env = {
        k: v
        for k, v in os.environ.items()
        if k not in _LAUNCHER_ENV and not k.startswith(_HOST_ONLY_ENV_PREFIXES)
    }
    if dump:
        from majob.precision import dumpconfig

        output = paths.outputs[dumpconfig.dump_channel(effective)]
        base_env.update(dumpconfig.prepare(effective, output, run_dir / "precision"))
    sink, lock = on_line or _print_line, threading.Lock()
    for notice in notices:
        sink(f"[majob] {notice}")
    started = time.monotonic()
    started_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    running: list[_Node] = []
    status, failed = "interrupted", None
    interruption: BaseException | None = None
    try:
        for command in commands:
            env = _process_env(
                command, base_env, guard_setup, paths, interpreter, standin.pythonpath
            )
            command = dataclasses.replace(command, env=env)
            log = run_dir / "logs" / f"{command.name}.log"
            running.append(_Node(command, log, sink, lock, effective.from_environ.masker()))
        deadline = started + limit if limit else None
        status, failed = _wait(running, deadline)
    except BaseException as error:  # Ctrl-C (KeyboardInterrupt) or a failed start: record it
        interruption = error
        status = "interrupted" if isinstance(error, KeyboardInterrupt) else "error"
    finally:
        with _deferred_interrupts():  # a second Ctrl-C must not cut the clean-up short
            _stop(running)
            for node in running:
                node.finish()
        duration = time.monotonic() - started

    outputs = list_outputs(effective, paths)
    copies = copy_outputs(effective, paths, overwrite=overwrite) if status == "passed" else []
    found = guard.findings(guard_setup.directory)
    result = RunResult(
        run_id=run_id,
        run_dir=run_dir,
        stage=stage,
        status=status,
        spec_digest=spec_digest(effective),
        started_at=started_at,
        duration=duration,
        nodes=tuple(NodeResult(n.command.index, n.process.returncode, n.log) for n in running),
        outputs=tuple(outputs),
        findings=tuple(found),
        output_dirs=dict(paths.outputs),
        copied_to={c.channel: c.target for c in copies},
        notices=notices,
        copies=tuple(copies),
    )
    _write_record(result, effective, commands, interpreter)
    result = replace(result, pruned=_prune_runs(run_dir, retention))
    if interruption is not None:
        raise interruption
    # The error's lines name the files the user edits: the copy's paths become the original's.
    copy_to_origin = (
        str(paths.code_dir) + os.sep,
        str(Path(effective.code.dir).resolve()) + os.sep,
    )
    _raise_for_status(result, failed, limit, strict, copy_to_origin)
    return result


def _prune_runs(run_dir: Path, retention: Retention | None) -> tuple[str, ...]:
    """Apply the retention policy to the runs beside ``run_dir`` (this one is always kept)."""
    if retention is None:
        return ()
    removed = apply_retention(run_dir.parent, retention, protect=(run_dir.name,))
    return tuple(run.run_id for run in removed)


def _build_tree(
    spec: JobSpec,
    run_dir: Path,
    input_sources: Mapping[str, Path],
    allow_secrets: bool = False,
    on_withheld: Callable[[str], None] | None = None,
) -> tuple[ContainerPaths, guard.GuardSetup]:
    """The run's container tree with the code copied and the inputs linked, and its guard."""
    paths = container_paths(spec, run_dir / "ma-user")
    for directory in (paths.code_dir, paths.log_dir, *paths.outputs.values(), run_dir / "logs"):
        directory.mkdir(parents=True, exist_ok=True)
    copy_code(spec, paths.code_dir, allow_secrets=allow_secrets, on_withheld=on_withheld)
    stage_inputs(spec, paths, input_sources)
    guard_setup = guard.prepare(
        run_dir / "guard",
        run_dir=run_dir,
        paths=paths,
        code_origin=Path(spec.code.dir).resolve(),
        input_origins=input_sources.values(),
        home=Path.home(),
    )
    return paths, guard_setup


def _process_env(
    command: NodeCommand,
    base_env: Mapping[str, str],
    guard_setup: guard.GuardSetup,
    paths: ContainerPaths,
    interpreter: str,
    first_on_path: tuple[str, ...] = (),
) -> dict[str, str]:
    """This shell's environment, the container's on top, ``first_on_path`` (the torch_npu CPU
    stand-in, when used) then the guard first on ``PYTHONPATH`` (then ``MA_JOB_DIR``, as ModelArts
    sets it) and the interpreter's dir first on ``PATH``."""
    env = {**base_env, **command.env, **guard_setup.env}
    python_path = (
        *first_on_path,
        str(guard_setup.site_dir),
        str(paths.job_dir),
        base_env.get("PYTHONPATH"),
    )
    env["PYTHONPATH"] = os.pathsep.join(p for p in python_path if p)
    env["PATH"] = os.pathsep.join((os.path.dirname(interpreter), base_env.get("PATH", "")))
    return env


def _write_record(
    result: RunResult, spec: JobSpec, commands: list[NodeCommand], interpreter: str
) -> None:
    record = {
        "run_id": result.run_id,
        "spec_name": spec.name,
        "spec_digest": result.spec_digest,
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


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "did not finish"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _raise_for_status(
    result: RunResult,
    failed: _Node | None,
    limit: int | None,
    strict: bool,
    copy_to_origin: tuple[str, str],
) -> None:
    if result.status == "failed" and failed is not None:
        node = next(n for n in result.nodes if n.index == failed.command.index)
        tail = "\n".join(f"  | {line.replace(*copy_to_origin)}" for line in failed.tail)
        others = " (the other nodes were stopped)" if len(result.nodes) > 1 else ""
        hint = f"full log: {node.log}"
        if any("No module named 'torch_npu'" in line for line in failed.tail):
            hint = (
                "the script needs Ascend NPUs (torch_npu); run it on ModelArts, or check it on "
                f"CPU with the migration tools; {hint}"
            )
        raise NodeFailedError(
            f"{node.name} {_describe_exit(node.exit_code)}{others}; its last lines:\n{tail}",
            node=node.index,
            exit_code=node.exit_code if node.exit_code is not None else -1,
            hint=hint,
        )
    if result.status == "timeout":
        raise RunTimeoutError(
            f"the {result.stage} stage passed its timeout of {limit}s; every node was stopped",
            hint=f"raise stages.{result.stage}.timeout or pass --timeout; logs: "
            f"{result.run_dir / 'logs'}",
        )
    if strict and result.findings:
        lines = "\n".join(f"  {f.describe()}" for f in result.findings)
        raise RunnerError(
            f"the guard found {counted(len(result.findings), 'problem')} (--strict):\n{lines}",
            hint=f"record: {result.record}",
        )
