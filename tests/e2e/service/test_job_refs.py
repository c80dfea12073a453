"""``majob status/logs/stop/delete`` take a job as ``majob history`` prints it (the first 8
characters of its id) or by its name: real client, the emulated ModelArts. (A name several jobs
share, which ModelArts's 2751 rule leaves only to older jobs, is tests/unit/service/
test_lookup.py's.)"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.pipeline.ledger import Ledger
from majob.service.base import JobFilter
from majob.service.rest import RestTrainingService

runner = CliRunner()


def majob(*args: str):
    return runner.invoke(app, [*args, "--profile", "emulator"])


def test_short_ids_from_history_and_names(project: Path, service: RestTrainingService) -> None:
    spec = str(project / "spec.yaml")
    for _ in range(2):  # the stage twice: the second is numbered, tiny-debug-2
        done = majob("submit", spec, "--wait", "--upload-inputs")
        assert done.exit_code == 0, done.output
    newest, older = service.search(JobFilter(name="tiny-debug"))[0]
    assert (newest.name, older.name) == ("tiny-debug-2", "tiny-debug")
    assert Ledger().records("tiny")[0].job_id == newest.id

    history = runner.invoke(app, ["history", spec])
    assert newest.id[:8] in history.output
    status = majob("status", newest.id[:8])
    assert status.exit_code == 0, status.output
    assert status.output.splitlines()[0] == f"job {newest.id} (tiny-debug-2)"
    logs = majob("logs", older.id[:8])
    assert logs.exit_code == 0, logs.output
    assert "[worker-0] done" in logs.output

    by_name = majob("status", "tiny-debug")  # the exact name, not a part of tiny-debug-2
    assert by_name.exit_code == 0, by_name.output
    assert by_name.stdout.splitlines()[0] == f"job {older.id} (tiny-debug)"
    assert by_name.stderr == ""

    stopped = majob("stop", older.id[:8])
    assert stopped.exit_code == 0, stopped.output
    assert f"job {older.id} (tiny-debug) has already ended: Completed" in stopped.output
    deleted = majob("delete", older.id[:6])
    assert deleted.exit_code == 0, deleted.output
    assert deleted.output == f"deleted job {older.id} (tiny-debug)\n"
    assert [job.id for job in service.search(JobFilter())[0]] == [newest.id]
    missing = majob("status", older.id[:8])
    assert missing.exit_code != 0
    assert f"no job has the id, short id or name '{older.id[:8]}'" in missing.output
