"""A node's output with no line break for megabytes (a tqdm bar redrawn with ``\\r``, a dump on
one line): each ``\\r`` ends a line on the terminal, no line is longer than 64 KiB, and the log
keeps the output's own line ends."""

from __future__ import annotations

from pathlib import Path

from majob.runner.lines import LINE_LIMIT
from majob.runner.local import run_local
from majob.spec.load import load_spec
from tests.unit.runner.conftest import MakeProject

REDRAWS = 20_000
PROGRESS = f"""\
import sys
for i in range({REDRAWS}):
    sys.stdout.write(f"\\r{{i:>6}}/{REDRAWS} |" + "#" * (i % 50))
sys.stdout.write("\\n")
sys.stdout.write("x" * 1_000_000 + "\\n")
print("done")
"""


def test_progress_bars_and_huge_lines_are_cut_into_lines(
    make_project: MakeProject, runs_dir: Path
) -> None:
    spec = make_project(PROGRESS)
    lines: list[str] = []
    result = run_local(spec, runs_dir=runs_dir, on_line=lines.append)
    assert max(len(line.encode()) for line in lines) < LINE_LIMIT + 100
    redraws = [line for line in lines if line.startswith("[worker-0]") and "/20000 |" in line]
    assert len(redraws) == REDRAWS
    assert redraws[-1].startswith(f"[worker-0]  {REDRAWS - 1:>5}/{REDRAWS} |")
    huge = next(line for line in lines if line.startswith("[worker-0] xxx"))
    assert huge.endswith(f"[majob: line truncated, {1_000_000 - LINE_LIMIT} more bytes not kept]")
    assert lines[-1] == "[worker-0] done"
    log = (result.run_dir / "logs" / "worker-0.log").read_bytes()
    assert log.count(b"\r") == REDRAWS  # the redraws, as the script wrote them
    assert b"x" * LINE_LIMIT + b" [majob: line truncated" in log
    assert log.endswith(b"not kept]\ndone\n")


def test_a_value_cut_by_the_limit_is_still_masked(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    secret = "hunter2-very-secret"
    # The value starts 5 bytes before the limit: the cut falls inside it.
    make_project(
        "import sys\n"
        f"sys.stdout.write('y' * {LINE_LIMIT - 5} + sys.argv[-1].split('=')[1] + 'z' * 100)\n"
    )
    spec_file = tmp_path / "job.yaml"
    spec_file.write_text(
        "name: tiny\n"
        "code: {dir: proj, boot_file: train.py}\n"
        "image: {engine: PyTorch, version: pytorch_1.8.0}\n"
        "resources: {flavor: modelarts.vm.cpu.8u}\n"
        "hyperparameters: {token: '${MY_SECRET}'}\n"
    )
    spec = load_spec(spec_file, environ={"MY_SECRET": secret})
    lines: list[str] = []
    result = run_local(spec, runs_dir=runs_dir, on_line=lines.append)
    log = (result.run_dir / "logs" / "worker-0.log").read_text()
    for written in (log, "\n".join(lines)):
        assert secret[:5] not in written
        assert "y" * (LINE_LIMIT - 5) + "***" in written
