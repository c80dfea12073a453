"""The ledger: records, concurrency, crashes, schema versions."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from majob.errors import LedgerError
from majob.pipeline.ledger import Ledger
from majob.pipeline.ledger_schema import MIGRATIONS, SCHEMA_VERSION
from majob.pipeline.netfs import Mount
from majob.processes import this_host


def start(ledger: Ledger, stage: str = "local", name: str = "job") -> int:
    return ledger.start(
        spec_name=name,
        stage=stage,
        spec_digest="s" * 64,
        code_digest="c" * 64,
        spec_json={"name": name},
        code_files={"train.py": "abc"},
    )


def test_a_record_goes_from_running_to_its_result(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        record_id = start(ledger)
        running = ledger.get(record_id)
        assert running.result == "running" and running.effective_result == "running"
        ledger.set_job(record_id, "job-1")
        ledger.finish(
            record_id,
            result="passed",
            duration=1.5,
            metrics={"worker-0": {"loss": [2.0, 1.0]}},
            outputs=["train_url/model.pth"],
        )
        record = ledger.get(record_id)
    assert record.passed
    assert record.job_id == "job-1"
    assert record.metrics == {"worker-0": {"loss": [2.0, 1.0]}}
    assert record.outputs == ("train_url/model.pth",)
    assert record.code_files == {"train.py": "abc"}
    assert record.last_metrics() == {"loss": 1.0}
    assert record.majob_version


def test_records_filter_by_spec_and_stage_newest_first(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        first = start(ledger, "local", "a")
        second = start(ledger, "debug", "a")
        start(ledger, "local", "b")
        assert [r.id for r in ledger.records("a")] == [second, first]
        assert [r.id for r in ledger.records("a", stage="local")] == [first]
        assert len(ledger.records()) == 3
        assert ledger.records(limit=1)[0].spec_name == "b"


def test_a_missing_ledger_reads_empty_and_is_not_created(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "none" / "ledger.db")
    assert ledger.records() == []
    assert ledger.by_job("x") is None
    assert not (tmp_path / "none" / "ledger.db").exists()


def test_an_unknown_result_is_refused(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        record_id = start(ledger)
        with pytest.raises(ValueError, match="result 'ok'"):
            ledger.finish(record_id, result="ok")


def test_a_running_record_of_a_dead_process_reads_interrupted(tmp_path: Path) -> None:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    dead_pid = int(child.stdout)
    with Ledger(tmp_path / "ledger.db") as ledger:
        record_id = start(ledger)
        ledger._connect().execute("UPDATE records SET pid = ? WHERE id = ?", (dead_pid, record_id))
        assert ledger.get(record_id).effective_result == "interrupted"


def _dead_pid() -> int:
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(child.stdout)


def test_a_running_record_of_another_host_stays_running(tmp_path: Path) -> None:
    # On the host that wrote it, its pipeline may well live; this host cannot see it.
    with Ledger(tmp_path / "ledger.db") as ledger:
        record_id = start(ledger)
        assert ledger.get(record_id).host == this_host()
        ledger._connect().execute(
            "UPDATE records SET host = 'build-7', pid = ? WHERE id = ?", (_dead_pid(), record_id)
        )
        record = ledger.get(record_id)
        assert record.elsewhere and record.effective_result == "running"


def test_a_running_record_whose_pid_another_process_took_reads_interrupted(
    tmp_path: Path,
) -> None:
    stranger = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        with Ledger(tmp_path / "ledger.db") as ledger:
            record_id = start(ledger)
            assert ledger.get(record_id).effective_result == "running"  # this very process
            ledger._connect().execute(
                "UPDATE records SET pid = ? WHERE id = ?", (stranger.pid, record_id)
            )
            assert ledger.get(record_id).effective_result == "interrupted"
    finally:
        stranger.kill()
        stranger.wait()


def test_a_ledger_on_a_network_file_system_uses_the_rollback_journal_and_a_lock(
    tmp_path: Path,
) -> None:
    path = tmp_path / "share" / "ledger.db"
    with Ledger(path) as local:  # written where WAL works, then the disk is shared over NFS
        start(local)
    nfs = [Mount("/", "ext4"), Mount(str(tmp_path / "share"), "nfs4")]
    with Ledger(path, mounts=nfs) as ledger:
        assert ledger.network_fs == "nfs4"
        record_id = start(ledger)
        ledger.finish(record_id, result="passed")
        assert [r.result for r in ledger.records()] == ["passed", "running"]
        assert ledger._connect().execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert (tmp_path / "share" / "ledger.db.lock").exists()
    assert not (tmp_path / "share" / "ledger.db-wal").exists()
    # A mount point that merely starts with the same letters is another file system.
    with Ledger(path, mounts=[Mount(str(tmp_path / "sha"), "nfs")]) as elsewhere:
        assert elsewhere.network_fs is None and elsewhere.journal_mode == "wal"


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from majob.pipeline.ledger import Ledger
    path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with Ledger(Path(path)) as ledger:
        ledger.records()  # opened (and migrated) before the race starts
        print("ready", flush=True)
        sys.stdin.readline()
        for i in range(count):
            record_id = ledger.start(spec_name=name, stage="local", spec_digest="s",
                                     code_digest="c")
            ledger.finish(record_id, result="passed", metrics={"worker-0": {"i": [float(i)]}})
    """
)


def test_two_writers_at_once_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "ledger.db")
    count = 150
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, path, name, str(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    for writer in writers:  # both start writing together
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.close()
    for writer in writers:
        assert writer.wait(120) == 0
        assert writer.stdout is not None
        writer.stdout.close()
    with Ledger(Path(path)) as ledger:
        ids = [r.id for r in ledger.records()]
        assert len(ids) == len(set(ids)) == 2 * count
        for name in ("a", "b"):
            records = ledger.records(name)
            assert all(r.passed for r in records)
            assert sorted(r.metrics["worker-0"]["i"][0] for r in records) == [
                float(i) for i in range(count)
            ]


KILLED_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from majob.pipeline.ledger import Ledger
    ledger = Ledger(Path(sys.argv[1]))
    i = 0
    while True:
        record_id = ledger.start(spec_name="job", stage="local", spec_digest="s", code_digest="c",
                                 code_files={f"f{n}.py": "x" * 64 for n in range(200)})
        ledger.finish(record_id, result="passed", outputs=[f"o{n}" for n in range(200)])
        i += 1
        if i == 5:
            print("writing", flush=True)
    """
)


def test_a_writer_killed_mid_write_leaves_a_readable_ledger(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    process = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(path)], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    assert process.stdout.readline() == "writing\n"  # it is in the middle of its writes
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    process.stdout.close()
    with Ledger(path) as ledger:
        records = ledger.records()
        assert len(records) >= 5
        # Every record is whole: a finished one has all its outputs, none is torn.
        for record in records:
            assert len(record.code_files) == 200
            assert record.result in ("running", "passed")
            if record.passed:
                assert len(record.outputs) == 200
        assert ledger._connect().execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_ledger_from_a_newer_majob_is_one_clear_error_and_untouched(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        start(ledger)
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    before = path.read_bytes()
    ledger = Ledger(path)
    with pytest.raises(LedgerError) as raised:
        ledger.records()
    assert "written by a newer majob" in raised.value.message
    assert f"ledger schema {SCHEMA_VERSION + 1}" in raised.value.message
    assert "not changed" in (raised.value.hint or "")
    with pytest.raises(LedgerError):
        start(ledger)
    assert path.read_bytes() == before


def test_an_old_ledger_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    sqlite3.connect(path).close()  # version 0: an empty file sqlite made
    with Ledger(path) as ledger:
        start(ledger)
        assert ledger._connect().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert ledger._connect().execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_version_1_ledger_gains_host_and_start_time(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    db = sqlite3.connect(path)
    db.executescript(MIGRATIONS[0])
    db.execute(
        "INSERT INTO records (spec_name, stage, spec_digest, code_digest, result, "
        "majob_version, started_at, pid) VALUES ('job', 'local', 's', 'c', 'running', '0.1', "
        "'2024-01-01T00:00:00+00:00', ?)",
        (_dead_pid(),),
    )
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()
    with Ledger(path) as ledger:
        (old,) = ledger.records()
        assert (old.host, old.pid_started, old.effective_result) == ("", "", "interrupted")


def test_a_file_that_is_no_ledger_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(LedgerError, match="cannot use the ledger"):
        Ledger(path).records()
    assert path.read_bytes() == b"this is not a database" * 100


def test_opening_a_ledger_another_connection_holds_locked_waits_for_it(tmp_path: Path) -> None:
    # Switching to WAL is answered "database is locked" at once, without SQLite's busy wait,
    # while another connection holds a write lock (as a second process opening the same new
    # ledger does); the opening is tried again (majob.retry) until the lock goes, not failed.
    import threading

    path = tmp_path / "ledger.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    released = threading.Event()

    def release() -> None:
        released.wait(10)
        holder.execute("COMMIT")
        holder.close()

    thread = threading.Thread(target=release)
    thread.start()
    try:
        ledger = Ledger(path)
        timer = threading.Timer(0.3, released.set)
        timer.start()
        with ledger:
            assert ledger.records() == []
        assert released.is_set()  # it did wait for the holder rather than open around it
    finally:
        released.set()
        thread.join()


def test_a_version_2_ledger_gains_restarts_and_keeps_its_records(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    db = sqlite3.connect(path)
    for step in MIGRATIONS[:2]:
        db.executescript(step)
    db.execute(
        "INSERT INTO records (spec_name, stage, spec_digest, code_digest, result, "
        "majob_version, started_at) VALUES ('job', 'debug', 's', 'c', 'passed', '0.1', "
        "'2024-01-01T00:00:00+00:00')"
    )
    db.execute("PRAGMA user_version = 2")
    db.commit()
    db.close()
    restart = {"at": 1, "task": "worker-1", "reason": "the node died", "recover": "job_reschedule"}
    with Ledger(path) as ledger:
        (old,) = ledger.records()
        assert (old.result, old.restarts) == ("passed", ())
        new = start(ledger)
        ledger.finish(new, result="passed", restarts=[restart])
        assert ledger.get(new).restarts == (restart,)
