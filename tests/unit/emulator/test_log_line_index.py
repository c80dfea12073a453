"""``LineIndex``: the complete lines of a log that grows while it is read."""

from __future__ import annotations

from pathlib import Path

from majob.emulator.modelarts.loglines import LineIndex, tail


def test_lines_appear_once_complete_and_a_partial_line_waits(tmp_path: Path) -> None:
    log = tmp_path / "worker-0.log"
    index = LineIndex(log)
    assert index.count() == 0 and index.lines(0, 10) == []
    log.write_bytes(b"one\ntw")
    assert index.count() == 1 and index.lines(0, 10) == ["one"]
    with log.open("ab") as handle:
        handle.write("o\nthr\u00e9e\n\nfour".encode())
    assert index.count() == 4
    assert index.lines(1, 2) == ["two", "thr\u00e9e"]
    assert index.lines(3, 500) == [""]
    assert index.lines(4, 500) == []


def test_a_log_that_shrank_is_indexed_again(tmp_path: Path) -> None:
    log = tmp_path / "worker-0.log"
    log.write_bytes(b"a\nb\nc\n")
    index = LineIndex(log)
    assert index.count() == 3
    log.write_bytes(b"new\n")
    assert index.lines(0, 10) == ["new"]


def test_tail_reads_the_end_and_tells_the_size(tmp_path: Path) -> None:
    log = tmp_path / "worker-0.log"
    assert tail(log, 4) == (b"", 0)
    log.write_bytes(b"0123456789")
    assert tail(log, 4) == (b"6789", 10)
    assert tail(log, 40) == (b"0123456789", 10)
