"""The error a finished local run raises when it did not pass: the failed node and its last
lines, a node's full /cache, the timeout, or (``--strict``) the guard's findings. Raised after
the record is written, so the record exists whatever the error says."""

from __future__ import annotations

import signal

from majob.errors import NodeFailedError, RunnerError, RunTimeoutError
from majob.runner.nodes import Node
from majob.runner.result import RunResult
from majob.text import counted


def describe_exit(code: int | None) -> str:
    if code is None:
        return "did not finish"
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def raise_for_status(
    result: RunResult,
    failed: Node | None,
    limit: int | None,
    strict: bool,
    copy_to_origin: tuple[str, str],
    evicted: str | None = None,
) -> None:
    """``copy_to_origin``: the code copy's path prefix and the original's, so the lines shown
    name the files the user edits; ``evicted``: a node's /cache was past its capacity, and
    this is what the emulator's eviction event says (``majob.container.cache_full``)."""
    if evicted is not None:
        raise RunnerError(
            evicted,
            hint=f"every node was stopped; logs: {result.run_dir / 'logs'} (--cache-size "
            "sets the capacity the local stage checks)",
        )
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
            f"{node.name} {describe_exit(node.exit_code)}{others}; its last lines:\n{tail}",
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
