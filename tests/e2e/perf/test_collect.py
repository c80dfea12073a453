"""``--perf`` end to end: a plain script (no profiler code in it) gets profiled locally by
``majob run --perf`` and on the emulated ModelArts by ``majob submit --perf``, whose profile
lands in the stage's output folder in the fake OBS, as ModelArts would upload it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from unittest.mock import ANY

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from majob.pipeline.digests import Fingerprint
from majob.pipeline.ledger import Ledger
from majob.pipeline.perf_records import PerfBasis, perf_records
from majob.pipeline.perf_target import basis_of
from majob.spec.load import load_spec
from majob.storage.obs import ObsObjectStore

pytestmark = pytest.mark.slow

BUCKET = "majob-demo"
TRAIN = """\
import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--train_url", default="out")
parser.add_argument("--steps", type=int, default=12)
args, _ = parser.parse_known_args()
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(args.steps):
    loss = model(torch.randn(8, 16)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
os.makedirs(args.train_url, exist_ok=True)
torch.save(model.state_dict(), os.path.join(args.train_url, "model.pth"))
print(f"trained {args.steps} steps, loss {loss.item():.4f}")
"""
SPEC = """\
name: tiny-perf
code: {{dir: code, boot_file: train.py, obs: "obs://{bucket}/t/code/"}}
image: {{engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}}
resources: {{flavor: modelarts.vm.cpu.8u, nodes: 1}}
outputs: [{{name: train_url, obs: "obs://{bucket}/t/out/"}}]
hyperparameters: {{steps: 12}}
perf: {{skip_first: 2, warmup: 1, active: 3}}
stages: {{debug: {{timeout: 5m}}}}
"""
FOLDER = re.compile(r"^worker-0-rank0_\d{17}_ascend_pt$")


def _project(tmp_path: Path) -> Path:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text(TRAIN, encoding="utf-8")
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.format(bucket=BUCKET), encoding="utf-8")
    return spec


def test_run_perf_profiles_a_plain_script_into_the_ascend_layout(tmp_path: Path) -> None:
    spec = _project(tmp_path)
    runs = tmp_path / "runs"
    result = CliRunner().invoke(app, ["run", str(spec), "--perf", "--runs-dir", str(runs)])
    assert result.exit_code == 0, result.output
    (run_dir,) = runs.iterdir()
    profiling = run_dir / "ma-user" / "modelarts" / "outputs" / "train_url_0" / "profiling"
    (folder,) = profiling.iterdir()
    assert FOLDER.match(folder.name), folder.name
    assert sorted(p.name for p in folder.iterdir()) == [
        "ASCEND_PROFILER_OUTPUT",
        "majob_steps_0.jsonl",
        "profiler_info_0.json",
    ]
    trace = json.loads((folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    names = {event.get("name") for event in trace["traceEvents"]}
    assert {"ProfilerStep#3", "ProfilerStep#4", "ProfilerStep#5"} <= names
    assert "ProfilerStep#2" not in names and "ProfilerStep#6" not in names
    info = json.loads((folder / "profiler_info_0.json").read_text())
    assert info["rank_id"] == 0 and info["node"] == 0 and info["device"] == "cpu"
    assert info["steps"] == [3, 5] and info["complete"] is True and info["reason"] == "exit"
    assert info["config"]["active"] == 3 and info["torch"].startswith("2.")
    lines = [json.loads(line) for line in (folder / "majob_steps_0.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == list(range(12))
    assert [line["step"] for line in lines if line["profiled"]] == [3, 4, 5]
    assert all(line["end_ns"] >= line["start_ns"] and line["gc_ns"] >= 0 for line in lines)
    out = result.stdout
    assert re.search(r"^step time p50 [\d.]+ ms, p95 [\d.]+ ms \(8 steps", out, re.M), out
    assert f"profile: 1 folder in {profiling}\n" in out
    # majob's own diagnosis of it, then where the whole table is
    assert re.search(r"^  step time p50 [\d.]+ ms, p95 [\d.]+ ms \(worker-0-rank0\): ", out, re.M)
    assert out.rstrip().endswith(f"with msprof-analyze's advisor: majob perf {profiling}")
    # The profile stays with the run: it is not copied into the output's local folder.
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("trace_view.json"))
    # Its diagnosis is a perf record of the spec's code (the checklist's item), and the run
    # directory says whose code it ran, for a later `majob perf RUN`.
    with Ledger(spec_file=spec) as ledger:
        (record,) = perf_records(ledger, "tiny-perf")
    assert record.source == "majob run --perf" and record.target == run_dir.name
    assert record.code_digest == Fingerprint.of(load_spec(spec)).code_digest
    assert record.step_p50_ms is not None and record.ranks == 1
    assert basis_of(run_dir) == PerfBasis("tiny-perf", "local", ANY, record.code_digest)


def test_a_plain_run_records_its_step_times_in_the_run_directory(tmp_path: Path) -> None:
    spec = _project(tmp_path)
    runs = tmp_path / "runs"
    result = CliRunner().invoke(app, ["run", str(spec), "--runs-dir", str(runs)])
    assert result.exit_code == 0, result.output
    (run_dir,) = runs.iterdir()
    steps = run_dir / "steps" / "worker-0-rank0" / "majob_steps_0.jsonl"
    lines = [json.loads(line) for line in steps.read_text().splitlines()]
    assert [line["step"] for line in lines] == list(range(12))
    assert not any(line["profiled"] for line in lines)
    assert not list(run_dir.rglob("profiling"))
    assert re.search(r"^step time p50 [\d.]+ ms, p95 [\d.]+ ms \(11 steps", result.stdout, re.M)


def test_the_pipeline_records_the_local_stage_s_step_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = _project(tmp_path)
    ledger = tmp_path / "ledger.db"
    args = ["pipeline", str(spec), "--until", "local", "--ledger", str(ledger)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert re.search(
        r"local: passed in [\d.]+s \(step p50 [\d.]+ ms, p95 [\d.]+ ms\)", result.stdout
    )
    with Ledger(ledger) as opened:
        (record,) = opened.records("tiny-perf")
    assert record.step_p50_ms is not None and record.step_p95_ms is not None


def test_run_refuses_perf_with_dump(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", str(_project(tmp_path)), "--perf", "--dump"])
    assert result.exit_code != 0
    assert "--perf and --dump: profile and dump in separate runs" in result.output


def test_run_perf_without_an_output_says_so_before_any_run_starts(tmp_path: Path) -> None:
    spec = _project(tmp_path)
    spec.write_text(spec.read_text().replace('outputs: [{name: train_url, obs: "obs://', "#"))
    runs = tmp_path / "runs"
    result = CliRunner().invoke(app, ["run", str(spec), "--perf", "--runs-dir", str(runs)])
    assert result.exit_code != 0
    assert "--perf writes the profile into an output channel and the spec has none" in result.output
    assert not runs.exists()


def test_submit_perf_puts_the_profile_in_the_stage_output_folder_in_obs(
    tmp_path: Path, cloud: EmulatedCloud, store: ObsObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = _project(tmp_path)
    ledger = tmp_path / "ledger.db"
    args = [
        "submit",
        str(spec),
        "--profile",
        "emulator",
        "--wait",
        "--perf",
        "--ledger",
        str(ledger),
    ]
    submitted = CliRunner().invoke(app, args)
    assert submitted.exit_code == 0, submitted.output
    where = f"obs://{BUCKET}/t/out/debug/profiling/"
    assert re.search(r"^\[majob\] step time p50 [\d.]+ ms, p95 [\d.]+ ms$", submitted.stdout, re.M)
    assert submitted.stdout.splitlines()[-1] == (
        f"[majob] profile: {where} with the train_url output; read it: majob perf {where}"
    )
    keys = sorted(o.key for o in store.list_all(BUCKET, "t/out/debug/profiling/"))
    folders = {key.split("/")[4] for key in keys}
    (folder,) = folders
    assert FOLDER.match(folder), keys
    prefix = f"t/out/debug/profiling/{folder}/"
    assert {
        prefix + "ASCEND_PROFILER_OUTPUT/trace_view.json",
        prefix + "majob_steps_0.jsonl",
        prefix + "profiler_info_0.json",
    } == set(keys)
    info = json.loads(store.get_bytes(BUCKET, prefix + "profiler_info_0.json"))
    assert info["steps"] == [3, 5] and info["complete"] is True
    # The user's code dir was not touched: the bootstrap went up from a staged copy.
    assert sorted(p.name for p in (tmp_path / "code").iterdir()) == ["train.py"]
    # The stage is recorded with its step time, read back from the step file in OBS.
    with Ledger(ledger) as opened:
        (record,) = opened.records("tiny-perf")
    assert record.passed and record.stage == "debug"
    assert record.step_p50_ms is not None and record.step_p95_ms is not None
    assert 0 < record.step_p50_ms <= record.step_p95_ms


def test_pipeline_perf_profiles_the_local_and_the_debug_stage(
    tmp_path: Path, cloud: EmulatedCloud, store: ObsObjectStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = _project(tmp_path)
    ledger = tmp_path / "ledger.db"
    args = ["pipeline", str(spec), "--perf", "--until", "debug", "--profile", "emulator"]
    result = CliRunner().invoke(app, [*args, "--ledger", str(ledger)])
    assert result.exit_code == 0, result.output
    where = f"obs://{BUCKET}/t/out/debug/profiling/"
    assert f"[majob] profile: {where} with the train_url output" in result.stdout
    assert re.search(
        r"^\[majob\] profile: 1 folder in .*/train_url_0/profiling$", result.stdout, re.M
    )
    keys = [o.key for o in store.list_all(BUCKET, "t/out/debug/profiling/")]
    assert any(key.endswith("/ASCEND_PROFILER_OUTPUT/trace_view.json") for key in keys), keys
    # the debug stage's profile, read back from OBS, diagnosed in the pipeline's own words
    debug = result.stdout.split(f"[majob] profile: {where}", 1)[1]
    assert re.search(r"^\[majob\]   step time p50 [\d.]+ ms, p95 [\d.]+ ms \(", debug, re.M)
    with Ledger(ledger) as opened:
        records = {r.stage: r for r in opened.records("tiny-perf")}
        diagnosed = {r.stage: r for r in perf_records(opened, "tiny-perf")}
    assert set(records) == {"local", "debug"}
    assert all(r.passed and r.step_p50_ms is not None for r in records.values())
    assert set(diagnosed) == {"local", "debug"}
    assert diagnosed["debug"].target == records["debug"].job_id
    assert {r.source for r in diagnosed.values()} == {"majob pipeline"}


EXPECT = """expect:
  perf: {{step_p50: '{bound}', data_wait: '<= 100%', stages: [local]}}
"""


@pytest.mark.parametrize(("bound", "passes"), [("< 0.001 ms", False), ("< 3600 s", True)])
def test_expect_perf_profiles_the_stage_it_names_and_holds_it_to_its_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: str, passes: bool
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = _project(tmp_path)
    spec.write_text(spec.read_text() + EXPECT.format(bound=bound))
    ledger = tmp_path / "ledger.db"
    args = ["pipeline", str(spec), "--until", "local", "--ledger", str(ledger)]
    result = CliRunner().invoke(app, args)  # no --perf: expect.perf asks for the profile
    assert result.exit_code == (0 if passes else 1), result.output
    assert re.search(r"^\[majob\] profile: 1 folder in .*/profiling$", result.stdout, re.M)
    failed = "expect.perf.step_p50: step_p50 < 0.001 ms failed: "
    assert (failed in result.output) is not passes, result.output
    with Ledger(ledger) as opened:
        (record,) = opened.records("tiny-perf")
        (diagnosed,) = perf_records(opened, "tiny-perf")
    assert record.passed is passes and diagnosed.stage == "local"
