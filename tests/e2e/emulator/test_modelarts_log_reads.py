"""Following a task's log costs what was appended since the last poll, not the whole log again.

The bytes this process reads (``rchar`` of ``/proc/self/io``: files and sockets, the fake
ModelArts runs in a thread of it) are counted around the polls of the official client: no clock
and no CPU figure is involved.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from huaweicloudsdkmodelarts.v1.model import (
    ShowTrainingJobLogsFromAomRequest,
    ShowTrainingJobLogsPreviewRequest,
)

from majob.emulator.modelarts.models import PREVIEW_LIMIT
from tests.e2e.emulator.conftest import Harness
from tests.e2e.emulator.test_modelarts_jobs import create

IO_STATS = Path("/proc/self/io")
LINES = 30_000
LINE = "x" * 999  # with its newline, 1000 bytes: the log is about 30 MB
LOUD = f"""\
import sys
sys.stdout.write(({LINE!r} + "\\n") * {LINES})
"""

pytestmark = pytest.mark.skipif(not IO_STATS.exists(), reason="needs Linux /proc/self/io")


def bytes_read() -> int:
    for line in IO_STATS.read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.fixture
def loud_job(harness: Harness) -> str:
    harness.upload_job(script=LOUD)
    job_id = create(harness, harness.body("loud", inputs=[], outputs=[]))
    assert harness.wait(job_id).status.phase == "Completed"
    return job_id


def log_lines(harness: Harness, job_id: str, base_line: int) -> tuple[int, int]:
    answer = harness.client.show_training_job_logs_from_aom(
        ShowTrainingJobLogsFromAomRequest(
            training_job_id=job_id, task_id="worker-0", base_line=str(base_line), lines=500
        )
    )
    return int(answer.end_line), answer.lines


def test_following_a_long_log_reads_it_about_once(harness: Harness, loud_job: str) -> None:
    log_size = harness.cloud.modelarts.backend.store.log_path(loud_job, "worker-0").stat().st_size
    before = bytes_read()
    end, got = log_lines(harness, loud_job, 0)
    assert got == 500
    while got:  # the whole log, page by page, as `majob logs --follow` reads it
        end, got = log_lines(harness, loud_job, end)
    for _ in range(20):  # then polls that find nothing new
        assert log_lines(harness, loud_job, end) == (end, 0)
    assert end >= LINES
    # The log is read once to find its lines, once to send the pages, and the pages cross the
    # socket once: three times its size. Before, each of the ~80 requests read all of it again.
    assert bytes_read() - before < 4 * log_size


def test_the_preview_reads_only_the_tail_it_returns(harness: Harness, loud_job: str) -> None:
    log_size = harness.cloud.modelarts.backend.store.log_path(loud_job, "worker-0").stat().st_size
    assert log_size > 4 * PREVIEW_LIMIT
    before = bytes_read()
    answer = harness.client.show_training_job_logs_preview(
        ShowTrainingJobLogsPreviewRequest(training_job_id=loud_job, task_id="worker-0")
    )
    assert answer.full_size == log_size and answer.current_size == PREVIEW_LIMIT
    assert answer.content.endswith("training end with exit code 0\n")
    assert bytes_read() - before < 3 * PREVIEW_LIMIT
