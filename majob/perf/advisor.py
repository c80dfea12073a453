"""msprof-analyze (MindStudio's profile analyzer, the ``perf`` extra) run on a profile, its
findings kept and nothing else.

The advisor runs as ``msprof-analyze advisor all -d DIR --agent -l en`` in a scratch directory
(its log file and outputs go there): in agent mode it prints one JSON object with its problems
table. Its banner, its log lines and its version string (which carries a build URL with
credentials in it) are never shown: only the rows of that table, with any user:password in a
URL cut out. It reads ``trace_view.json`` as a bare array of events (torch_npu's shape); a
torch.profiler trace (an object with ``traceEvents``) is rewritten to that shape in the
scratch directory first.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from majob.perf.layout import OUTPUT_DIR, RankDir
from majob.perf.trace import ReadState, write_event_array

INSTALL_HINT = "msprof-analyze is not installed: pip install 'majob[perf]' adds its advisor"
TIMEOUT_S = 900.0
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)[^/\s@]+@")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# msprof-analyze's problem categories and the majob finding that measures the same thing
SAME_AS = {
    "dataloader": "data_wait",
    "gc": "gc",
    "synchron": "host_sync",
    "dispatch": "small_ops",
    "optimizer": "optimizer",
}


@dataclass(frozen=True)
class AdvisorProblem:
    category: str
    description: str
    suggestions: tuple[str, ...]
    total_us: float | None = None
    income_us: float | None = None  # msprof-analyze's estimate of the time a fix saves

    @property
    def same_as(self) -> str | None:
        lowered = self.category.lower()
        return next((key for word, key in SAME_AS.items() if word in lowered), None)


@dataclass
class AdvisorResult:
    """What the advisor said: its problems, or why there are none (``note``)."""

    ran: bool
    problems: list[AdvisorProblem] = field(default_factory=list)
    note: str = ""
    rank: str = ""


def installed() -> bool:
    try:
        import msprof_analyze  # noqa: F401
    except ImportError:
        return False
    return True


def clean(text: str) -> str:
    """Text of msprof-analyze fit to show: no credentials in URLs, no terminal escapes."""
    return _USERINFO.sub(r"\1", _ANSI.sub("", text)).strip()


def prepare(rank_dir: RankDir, scratch: Path) -> Path:
    """The folder to give the advisor for ``rank_dir``: itself when its trace is already a
    bare array, else a copy in ``scratch`` with the trace rewritten to one."""
    trace = rank_dir.trace
    if trace is None:
        return rank_dir.path
    with trace.open("rb") as handle:
        head = handle.read(64).lstrip()
    if head.startswith(b"["):
        return rank_dir.path
    folder = scratch / "input" / f"{rank_dir.label}_ascend_pt"
    (folder / OUTPUT_DIR).mkdir(parents=True, exist_ok=True)
    target = folder / OUTPUT_DIR / "trace_view.json"
    if not copy_event_bytes(trace, target):
        write_event_array(ReadState(trace), target)
    return folder


_HEAD = b'"traceEvents": ['
_TAIL = b'],"traceName"'
_EDGE = 1 << 16


def copy_event_bytes(trace: Path, target: Path) -> bool:
    """The event array of a whole torch.profiler trace copied byte for byte (kineto writes
    ``"traceEvents": [`` near the start and ``],"traceName"`` at the end): seconds faster
    than parsing it. False, and nothing written, when the file is not laid out so (cut short
    by a kill, written by another tool): the caller rewrites it event by event then."""
    size = trace.stat().st_size
    with trace.open("rb") as source:
        head = source.read(_EDGE)
        start = head.find(_HEAD)
        source.seek(max(size - _EDGE, 0))
        tail_at = max(size - _EDGE, 0)
        end = source.read().rfind(_TAIL)
        if start < 0 or end < 0 or tail_at + end <= start:
            return False
        source.seek(start + len(_HEAD) - 1)  # the "["
        left = tail_at + end + 1 - (start + len(_HEAD) - 1)  # up to and with the "]"
        with target.open("wb") as out:
            while left > 0:
                chunk = source.read(min(left, 1 << 20))
                if not chunk:
                    return False
                out.write(chunk)
                left -= len(chunk)
    return True


# The advisor renices its analysis to 19 (its controller's _set_analysis_process_priority):
# on a machine with anything else busy it then gets almost no CPU, and `majob perf`, which
# waits for it, took 10 minutes instead of 5 s beside a test suite. It keeps the caller's
# priority instead: the user asked for this analysis and waits on it.
KEEP_PRIORITY = (
    "from msprof_analyze.advisor.analyzer.analyzer_controller import AnalyzerController\n"
    "AnalyzerController._set_analysis_process_priority = staticmethod(lambda pid: None)\n"
)
_LAUNCH = KEEP_PRIORITY + (
    "import sys\n"
    "from msprof_analyze.cli.entrance import msprof_analyze_cli\n"
    "sys.argv[0] = 'msprof-analyze'\n"
    "sys.exit(msprof_analyze_cli())\n"
)


def start(folder: Path, scratch: Path) -> subprocess.Popen[bytes]:
    """The advisor, started on ``folder`` (read its answer with ``finish``)."""
    out = scratch / "advisor"
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, TMPDIR=str(scratch), MSPROF_ANALYZE_LOG_FILE=str(scratch / "log.txt"))
    command = [sys.executable, "-c", _LAUNCH]
    command += ["advisor", "all", "-d", str(folder), "-o", str(out), "--agent", "-l", "en"]
    return subprocess.Popen(
        command,
        cwd=scratch,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # the banner and the log: never shown
    )


def finish(process: subprocess.Popen[bytes], rank: str) -> AdvisorResult:
    try:
        stdout, _ = process.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        return AdvisorResult(False, note=f"msprof-analyze advisor: no answer in {TIMEOUT_S:.0f} s")
    answer = _answer(stdout.decode("utf-8", "replace"))
    if answer is None:
        return AdvisorResult(
            False, note=f"msprof-analyze advisor gave no answer (exit {process.returncode})"
        )
    return parse_answer(answer, rank)


def _answer(stdout: str) -> dict[str, object] | None:
    """The agent-mode JSON object (the last line that is one)."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except ValueError:
                continue
            if isinstance(data, dict) and "status" in data:
                return data
    return None


def parse_answer(answer: dict[str, object], rank: str) -> AdvisorResult:
    if answer.get("status") != "success":
        message = answer.get("message")
        why = clean(str(message if isinstance(message, str) else answer.get("suggestion", "")))
        return AdvisorResult(False, note=f"msprof-analyze advisor failed: {why[:200]}", rank=rank)
    message = answer.get("message")
    table = message.get("problems") if isinstance(message, dict) else None
    problems = _problems(table) if isinstance(table, dict) else []
    note = "" if problems else "msprof-analyze advisor: no optimization suggestions for this data"
    return AdvisorResult(True, problems, note, rank)


def _problems(table: dict[str, object]) -> list[AdvisorProblem]:
    headers = table.get("headers")
    rows = table.get("data")
    if not isinstance(headers, list) or not isinstance(rows, list):
        return []
    found: list[AdvisorProblem] = []
    for row in rows:
        if not isinstance(row, list):
            continue
        cells = dict(zip((str(h) for h in headers), row, strict=False))
        suggestions = [
            re.sub(r"^\d+\.\s*", "", clean(line))
            for line in str(cells.get("suggestion", "")).splitlines()
        ]
        found.append(
            AdvisorProblem(
                category=clean(str(cells.get("category", ""))),
                description=clean(str(cells.get("description", ""))),
                suggestions=tuple(s for s in suggestions if s),
                total_us=_number(cells.get("total_time(us)")),
                income_us=_number(cells.get("income(us)")),
            )
        )
    return found


def _number(value: object) -> float | None:
    try:
        return float(value) if value not in (None, "") else None  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
