"""What a ``--dump`` run says about its dump when it ends: a few lines instead of msprobe's
messages (which the bootstrap sends to ``msprobe-rank<R>.log``) and instead of one line per
dumped file.
"""

from __future__ import annotations

import re
from pathlib import Path

from majob.text import counted, human_bytes

_LEVEL = re.compile(r"\[(WARNING|ERROR)\] ")


def dump_summary(dump_dir: Path, run_id: str) -> list[str]:
    """``precision dump: ...`` and its details: the steps and ranks dumped, the size, msprobe's
    log with its warning and error counts, the first NaN/Inf (``nonfinite.py``) and the compare
    command."""
    if not dump_dir.is_dir():
        return [f"precision dump: none in {dump_dir} (did the script call a torch module?)"]
    steps = sorted(
        (p for p in dump_dir.glob("step*") if p.is_dir() and p.name[4:].isdigit()),
        key=lambda p: int(p.name[4:]),
    )
    ranks = sorted({rank.name for step in steps for rank in step.iterdir() if rank.is_dir()})
    files = [p for p in dump_dir.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    shown = ", ".join(p.name[4:] for p in steps) or "none"
    lines = [
        f"precision dump: steps {shown} ({counted(len(ranks), 'rank')}, "
        f"{counted(len(files), 'file')}, {human_bytes(size)}) in {dump_dir}"
    ]
    from majob.precision.nonfinite import scan

    lines += [f"  {line}" for line in scan(dump_dir).lines()]  # the first NaN/Inf, if any
    for log in sorted(dump_dir.glob("msprobe-rank*.log")):
        text = log.read_text(encoding="utf-8", errors="replace").splitlines()
        levels = [m.group(1) for line in text if (m := _LEVEL.search(line))]
        lines.append(
            f"  msprobe's messages: {log.name} ({counted(len(text), 'line')}, "
            f"{counted(levels.count('WARNING'), 'warning')}, "
            f"{counted(levels.count('ERROR'), 'error')})"
        )
    grad = sorted((dump_dir / "grad").glob("rank*/grad_summary_*.csv"))
    if grad:  # --dump grad (gradprobe.py)
        grad_steps = sorted({int(p.stem.rsplit("_", 1)[-1]) for p in grad})
        grad_ranks = {p.parent.name for p in grad}
        lines.append(
            f"  gradients: steps {', '.join(map(str, grad_steps))} "
            f"({counted(len(grad_ranks), 'rank')}) in {dump_dir.name}/grad/"
        )
    lines.append(f"  compare it with another dump run: majob compare {run_id} OTHER_RUN")
    return lines
