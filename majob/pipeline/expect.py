"""The ``expect:`` checks, applied to what a stage produced: its output files, its log lines
and its metric series. Each failure names the check as written in the spec and what was seen."""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from majob.pipeline.metrics import node_order
from majob.spec.expect import Expect, parse_bound

if TYPE_CHECKING:
    from majob.pipeline.rehearsal import Rehearsal

#: Each bound's operator (``spec/expect.py``, ``spec/perf_expect.py``) as a comparison.
COMPARE: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
}


def check_expect(
    expect: Expect,
    *,
    outputs: Sequence[str],
    lines: Sequence[str],
    metrics: Mapping[str, Mapping[str, list[float]]],
) -> list[str]:
    """The checks that failed, one line each (empty: all hold).

    ``outputs`` are ``<channel>/<path>`` of every output file; ``lines`` the log lines of all
    nodes; ``metrics`` each node's series."""
    failures = []
    for wanted in expect.outputs:
        wanted_path = wanted.strip("/")
        if not any(out == wanted_path or out.split("/", 1)[-1] == wanted_path for out in outputs):
            seen = ", ".join(outputs[:5]) + (" ..." if len(outputs) > 5 else "") or "none"
            failures.append(f"expect.outputs: {wanted} is missing (output files: {seen})")
    for pattern in expect.log_contains:
        if not any(re.search(pattern, line) for line in lines):
            failures.append(f"expect.log_contains: no log line matches {pattern!r}")
    for pattern in expect.log_excludes:
        hit = next((line for line in lines if re.search(pattern, line)), None)
        if hit is not None:
            failures.append(f"expect.log_excludes: {pattern!r} matched the line {hit.strip()!r}")
    for name, bound in expect.metrics.items():
        op, limit = parse_bound(bound)
        reported = [
            (node, metrics[node][name][-1])
            for node in sorted(metrics, key=node_order)
            if metrics[node].get(name)
        ]
        if not reported:
            failures.append(
                f"expect.metrics.{name}: {name} {op} {limit:g} cannot hold: no log line "
                f"reported {name}"
            )
            continue
        for node, value in reported:
            if not COMPARE[op](value, limit):
                failures.append(
                    f"expect.metrics.{name}: {name} {op} {limit:g} failed: the last value on "
                    f"{node} is {value:g}"
                )
    return failures


def resume_failures(rehearsal: Rehearsal) -> list[str]:
    """``expect.resumes``: what the local stage's rehearsal showed wrong, one line each."""
    verdict = rehearsal.verdict
    failures = []
    if verdict.resumed is None:
        failures.append(f"expect.resumes: {verdict.how}")
    elif not verdict.resumed:
        failures.append(
            f"expect.resumes: after {rehearsal.plan.describe()}, the restarted run started "
            f"from {verdict.began} ({verdict.how})"
        )
    failures += [
        f"expect.resumes: the final {final.name} after the restart is "
        f"{'none' if final.restarted is None else f'{final.restarted:g}'}, uninterrupted "
        f"{'none' if final.reference is None else f'{final.reference:g}'} (more than "
        f"{final.tolerance:.0%} apart)"
        for final in verdict.finals
        if not final.matches
    ]
    return failures
