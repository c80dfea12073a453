"""Ctrl-C or a SIGTERM (a scheduler, ``timeout``) during ``majob submit --wait`` leaves the job
running and says how to follow it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from majob.pipeline.ledger import Ledger

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_an_interrupt_leaves_the_job_running(project: Path, service, signum: int) -> None:
    command = [
        sys.executable,
        "-m",
        "majob",
        "submit",
        str(project / "spec.yaml"),
        "--profile",
        "emulator",
        "--upload-inputs",
        "--wait",
        "--set",
        "hyperparameters.sleep=60",
    ]
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None and process.stderr is not None
    seen: list[str] = []
    started = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            if "[worker-0] step 2" in line:
                started.set()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        assert started.wait(60), "".join(seen)
        process.send_signal(signum)
        code = process.wait(30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        reader.join(10)
    errors = process.stderr.read()
    process.stderr.close()
    process.stdout.close()
    assert code == 130, errors
    job_id = next(line for line in seen if line.startswith("submitted job ")).split()[2]
    assert f"interrupted: job {job_id} (tiny-debug) keeps running on ModelArts" in errors
    assert f"majob logs {job_id} --follow" in errors
    assert f"majob stop {job_id}" in errors
    assert service.get(job_id).phase == "Running"
    # The ledger says so too: the next `majob pipeline` follows this job instead of a new one.
    [record] = Ledger().records("tiny")
    assert (record.stage, record.result, record.job_id) == ("debug", "interrupted", job_id)
    service.terminate(job_id)
