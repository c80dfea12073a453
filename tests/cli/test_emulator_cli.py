"""``majob emulator obs``: the fake OBS as a command."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
import socket
import subprocess
import sys
from email.utils import formatdate
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.storage.obs import ObsObjectStore
from majob.testing import fake_obs_process, obs_config


@pytest.mark.slow
def test_serves_until_terminated(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "majob", "emulator", "obs", "--port", "0", "--bucket", "cli-bucket",
         "--data", str(tmp_path / "data")],
        stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        endpoint = process.stdout.readline().strip()
        assert endpoint.startswith("http://127.0.0.1:")
        with ObsObjectStore(obs_config(endpoint)) as store:
            store.put_bytes("cli-bucket", "k", b"v")
            assert store.get_bytes("cli-bucket", "k") == b"v"
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        if process.stdout is not None:
            process.stdout.close()
    assert '"name":"cli-bucket"' in (tmp_path / "data" / "journal.jsonl").read_text()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--credential", "AKONLY"], "--credential wants ACCESS_KEY:SECRET_KEY"),
        (["--bucket", "Bad_Name"], "bucket name 'Bad_Name'"),
        (["--faults", "missing.json"], "cannot read fault rules missing.json"),
    ],
)
def test_bad_arguments_are_one_clear_error(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["emulator", "obs", *args])
    assert result.exit_code == 2
    assert f"error: {message}" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "faults.json:1:2: Expecting property name"),
        ('{"status": 503}', "must be a JSON list"),
        ('[{"status": 503, "colour": "red"}]', "rule 1: unknown fault rule fields: colour"),
        ("[{}]", "rule 1: a fault rule needs a status"),
        ("[3]", "rule 1: a rule must be an object"),
    ],
)
def test_bad_fault_files(
    content: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("faults.json").write_text(content, encoding="utf-8")
    result = CliRunner().invoke(app, ["emulator", "obs", "--faults", "faults.json"])
    assert result.exit_code == 2
    assert message in result.output


def test_fault_file_rules_load(tmp_path: Path) -> None:
    from majob.emulator.obs.standalone import load_fault_rules

    path = tmp_path / "faults.json"
    path.write_text(json.dumps([{"status": 503, "probability": 0.1}, {"reset": True, "count": 2}]))
    rules = load_fault_rules(path)
    assert [(r.status, r.reset) for r in rules] == [(503, False), (None, True)]


@pytest.mark.slow
def test_start_status_stop_the_daemon(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huaweicloudsdkmodelarts.v1.model import CreateTrainingJobRequest

    from majob.spec.emulator_state import running_emulator
    from majob.spec.profiles import load_profile

    state = tmp_path / "state"
    monkeypatch.setenv("MAJOB_EMULATOR_DIR", str(state))
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path / "config"))
    runner = CliRunner()
    started = runner.invoke(
        app, ["emulator", "start", "--bucket", "majob-demo", "--bucket", "extra"]
    )
    try:
        assert started.exit_code == 0, started.output
        assert "the emulator is running (pid" in started.output
        endpoints = running_emulator()
        assert f"ModelArts:  {endpoints.modelarts}" in started.output
        again = runner.invoke(app, ["emulator", "start"])
        assert again.exit_code == 0 and "already running" in again.output
        profile = load_profile("emulator")
        assert profile.modelarts_endpoint == endpoints.modelarts
        with ObsObjectStore(obs_config(endpoints.obs)) as store:
            store.put_bytes("extra", "code/train.py", b"import time\ntime.sleep(60)\n")
        from tests.e2e.emulator.conftest import client_for, job_body, wait_phase

        body = job_body("in-the-daemon", inputs=[], outputs=[])
        body["algorithm"]["code_dir"] = "/extra/code/"
        body["algorithm"]["boot_file"] = "/extra/code/train.py"
        client = client_for(endpoints)
        job_id = client.create_training_job(CreateTrainingJobRequest(body=body)).metadata.id
        wait_phase(client, job_id, ("Running",))
        status = runner.invoke(app, ["emulator", "status"])
        assert status.exit_code == 0 and "jobs: Running 1" in status.output
    finally:
        stopped = runner.invoke(app, ["emulator", "stop"])
    assert stopped.exit_code == 0 and "stopped the emulator" in stopped.output
    assert not (state / "state.json").exists()
    gone = runner.invoke(app, ["emulator", "status"])
    assert gone.exit_code == 2 and "the emulator is not running" in gone.output
    assert runner.invoke(app, ["emulator", "stop"]).output.strip() == "the emulator is not running"
    # The job that was running when the daemon stopped is Abnormal once it is back.
    restarted = runner.invoke(app, ["emulator", "start"])
    try:
        assert restarted.exit_code == 0, restarted.output
        job = wait_phase(client_for(running_emulator()), job_id, ("Abnormal",))
        assert job.status.secondary_phase == "Lost"
    finally:
        runner.invoke(app, ["emulator", "stop"])


def test_a_bad_bucket_name_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAJOB_EMULATOR_DIR", str(tmp_path))
    result = CliRunner().invoke(app, ["emulator", "start", "--bucket", "Bad_Name"])
    assert result.exit_code == 2 and "error: --bucket: bucket name 'Bad_Name'" in result.output


def _stall_mid_body(endpoint: str, bucket: str) -> bytes:
    """A V2-signed PUT that announces 100 bytes, sends 9 and goes idle: the fake's answer, read
    until it closes the connection or 10 s pass (well beyond the timeouts the tests set, well
    short of the 20 s default)."""
    from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY

    date = formatdate(usegmt=True)
    to_sign = f"PUT\n\n\n{date}\n/{bucket}/stalled"
    signature = base64.b64encode(
        hmac.new(DEFAULT_SECRET_KEY.encode(), to_sign.encode(), hashlib.sha1).digest()
    ).decode()
    head = (
        f"PUT /{bucket}/stalled HTTP/1.1\r\nHost: x\r\nDate: {date}\r\nContent-Length: 100\r\n"
        f"Authorization: AWS {DEFAULT_ACCESS_KEY}:{signature}\r\n\r\nonly part"
    )
    port = int(endpoint.rsplit(":", 1)[1])
    received = b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(head.encode())
        with contextlib.suppress(TimeoutError):
            while chunk := sock.recv(65536):
                received += chunk
    return received


def _timed_out(answer: bytes) -> bool:
    return answer.startswith(b"HTTP/1.1 400 ") and b"<Code>RequestTimeout</Code>" in answer


def test_the_request_timeout_is_an_option_of_the_obs_command() -> None:
    with fake_obs_process(buckets=("bkt",), extra_args=("--request-timeout", "0.3")) as fake:
        assert _timed_out(_stall_mid_body(fake.endpoint, "bkt"))


def test_the_request_timeout_is_an_option_of_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from majob.spec.emulator_state import running_emulator

    monkeypatch.setenv("MAJOB_EMULATOR_DIR", str(tmp_path / "state"))
    runner = CliRunner()
    started = runner.invoke(app, ["emulator", "start", "--request-timeout", "0.3"])
    try:
        assert started.exit_code == 0, started.output
        assert _timed_out(_stall_mid_body(running_emulator().obs, "majob-demo"))
    finally:
        runner.invoke(app, ["emulator", "stop"])


def test_a_request_timeout_that_is_not_positive_is_refused() -> None:
    result = CliRunner().invoke(app, ["emulator", "obs", "--request-timeout", "0"])
    assert result.exit_code == 2 and "--request-timeout" in result.output
