"""What a ``--dump`` run prints about its dump, and msprobe's messages sent to a log file."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from majob.precision.dumpconfig import BOOTSTRAP
from majob.precision.dumped import dump_summary


def test_the_summary_names_the_steps_ranks_size_log_and_the_compare_command(
    tmp_path: Path,
) -> None:
    dump = tmp_path / "precision-dump"
    for step in (0, 1, 10):
        (dump / f"step{step}" / "rank0").mkdir(parents=True)
        (dump / f"step{step}" / "rank0" / "dump.json").write_text("{}")
    (dump / "step1" / "rank1").mkdir()
    (dump / "step1" / "rank1" / "dump.json").write_text("{}")
    (dump / "msprobe-rank0.log").write_text(
        "2026-01-01 00:00:00 (1) [INFO] Dump switch is turned on at step 0.\n"
        "2026-01-01 00:00:00 (1) [WARNING] something odd\n"
    )
    size = sum(p.stat().st_size for p in dump.rglob("*") if p.is_file())
    lines = dump_summary(dump, "RUN")
    assert lines == [
        f"precision dump: steps 0, 1, 10 (2 ranks, 5 files, {size} B) in {dump}",
        "  msprobe's messages: msprobe-rank0.log (2 lines, 1 warning, 0 errors)",
        "  compare it with another dump run: majob compare RUN OTHER_RUN",
    ]


def test_a_run_that_dumped_nothing_says_so(tmp_path: Path) -> None:
    (line,) = dump_summary(tmp_path / "precision-dump", "RUN")
    assert line.startswith("precision dump: none in ")


def _bootstrap() -> ModuleType:
    spec = importlib.util.spec_from_file_location("majob_bootstrap_under_test", BOOTSTRAP)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_msprobes_info_lines_go_to_the_log_and_its_warnings_are_printed_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    log = pytest.importorskip("msprobe.core.common.log")
    monkeypatch.setenv("RANK", "3")

    class Logger(log.BaseLogger):  # type: ignore[misc,name-defined]
        """A subclass: the patch stays off msprobe's own class in this process."""

    _bootstrap()._log_to_file(Logger, str(tmp_path / "dump"))
    logger = Logger()
    logger.info("Dump switch is turned on at step 0.")
    logger.warning("the API list is empty")
    printed = capsys.readouterr().out
    assert "Dump switch" not in printed
    assert printed.endswith("[WARNING] the API list is empty\n")
    written = (tmp_path / "dump" / "msprobe-rank3.log").read_text().splitlines()
    assert [line.split(") ", 1)[1] for line in written] == [
        "[INFO] Dump switch is turned on at step 0.",
        "[WARNING] the API list is empty",
    ]
