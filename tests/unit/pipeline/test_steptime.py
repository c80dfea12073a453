"""Step time in the ledger (schema 5): recorded per stage, read back, and a formal run more than
20% slower than the last formal run of its spec and flavor flagged."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.pipeline.ledger import Ledger
from majob.pipeline.ledger_schema import MIGRATIONS, SCHEMA_VERSION
from majob.pipeline.steptime import formal_flavor, slower_line, slower_than_last


def _record(
    ledger: Ledger, p50: float | None, *, flavor: str = "cpu.8u", stage: str = "formal"
) -> int:
    spec_json = {"resources": {"flavor": "cpu.2u"}, "stages": {"formal": {"flavor": flavor}}}
    record_id = ledger.start(
        spec_name="job", stage=stage, spec_digest="s", code_digest="c", spec_json=spec_json
    )
    step_ms = (p50, p50 * 1.5) if p50 is not None else None
    ledger.finish(record_id, result="passed", duration=1.0, step_ms=step_ms)
    return record_id


def test_a_ledger_of_schema_4_gains_the_step_time_columns(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    db = sqlite3.connect(path)
    for migration in MIGRATIONS[:4]:
        db.executescript(migration)
    db.execute(
        "INSERT INTO records (spec_name, stage, spec_digest, code_digest, result, "
        "majob_version, started_at) VALUES ('job', 'formal', 's', 'c', 'passed', '0.1', "
        "'2024-01-01T00:00:00+00:00')"
    )
    db.execute("PRAGMA user_version = 4")
    db.commit()
    db.close()
    assert SCHEMA_VERSION >= 5  # later migrations keep these columns
    with Ledger(path) as ledger:
        (old,) = ledger.records()
        assert (old.step_p50_ms, old.step_p95_ms) == (None, None)
        new = ledger.get(_record(ledger, 12.5))
        assert (new.step_p50_ms, new.step_p95_ms) == (12.5, 18.75)


def test_a_formal_run_over_20_percent_slower_than_the_last_of_its_flavor_is_flagged(
    tmp_path: Path,
) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        first = _record(ledger, 10.0)
        _record(ledger, 5.0, flavor="gpu.1")  # another flavor: not compared
        _record(ledger, 99.0, stage="debug")  # another stage: not compared
        slower = ledger.get(_record(ledger, 12.5))
        formal = ledger.records("job", stage="formal")
        found = slower_than_last(slower, formal)
        assert found is not None
        earlier, ratio = found
        assert (earlier.id, ratio) == (first, 1.25)
        assert formal_flavor(slower) == "cpu.8u"
        assert slower_line(slower, earlier, ratio) == (
            f"#{slower.id} formal is 25% slower per step than #{first} (p50 12.5 ms against "
            "10.0 ms, same spec and flavor cpu.8u): profile it with `--perf`"
        )
        within = ledger.get(_record(ledger, 14.0))  # 12% slower than the last one: fine
        assert slower_than_last(within, ledger.records("job", stage="formal")) is None
        unknown = ledger.get(_record(ledger, None))
        assert slower_than_last(unknown, ledger.records("job", stage="formal")) is None


def test_history_shows_the_step_time_and_flags_the_slower_formal_run(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    with Ledger(path) as ledger:
        first = _record(ledger, 10.0)
        slower = _record(ledger, 15.0)
    result = CliRunner().invoke(app, ["history", "--ledger", str(path)])
    assert result.exit_code == 0, result.output
    assert "15.0 ms" in result.stdout and "10.0 ms" in result.stdout
    assert f"#{slower} formal is 50% slower per step than #{first}" in result.stdout
    shown = CliRunner().invoke(app, ["history", "--ledger", str(path), "--format", "json"])
    rows = {row["id"]: row for row in json.loads(shown.stdout)}
    assert (rows[slower]["step_p50_ms"], rows[slower]["step_p95_ms"]) == (15.0, 22.5)
