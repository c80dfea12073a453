"""What a local run did: ``RunResult`` and its parts (nodes, output files, output copies)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from majob import display
from majob.runner.guard import GuardFinding
from majob.spec.models import Stage
from majob.text import counted


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
    """What a local run did; ``status``: passed, failed, timeout, interrupted or error.
    ``effective_spec_digest``: of the spec as this run ran it (``record.effective_spec_digest``),
    not the pipeline's gate digest."""

    run_id: str
    run_dir: Path
    stage: Stage
    status: str
    effective_spec_digest: str
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
