from __future__ import annotations

import json
from pathlib import Path

from majob.runner.guard import GuardFinding, findings, prepare
from majob.runner.layout import container_paths
from majob.spec.models import JobSpec


def test_findings_are_read_back_deduplicated_and_sorted(tmp_path: Path) -> None:
    lines = [
        {"kind": "write", "path": "/a/x", "where": "/src/t.py:3", "node": "1"},
        {"kind": "write", "path": "/a/x", "where": "/src/t.py:3", "node": "0"},
        {"kind": "read", "path": "/home/u/d", "where": "", "node": "0"},
    ]
    (tmp_path / "events-1.jsonl").write_text("\n".join(json.dumps(e) for e in lines) + "\n")
    (tmp_path / "events-2.jsonl").write_text('{"kind": "write", "path": "/cut')  # killed mid-line
    assert findings(tmp_path) == [
        GuardFinding("read", "/home/u/d", "", "0"),
        GuardFinding("write", "/a/x", "/src/t.py:3", "0"),
    ]


def test_describe_says_what_to_do() -> None:
    write = GuardFinding("write", "/x/model.pth", "/src/train.py:9", "0").describe()
    assert write.startswith("/src/train.py:9: writes /x/model.pth, outside the output dirs")
    assert "--train_url" in write
    read = GuardFinding("read", "/home/u/data.csv", "", "0").describe()
    assert read.startswith("(not from the code dir): reads /home/u/data.csv")
    assert "declare it as an input" in read


def test_prepare_writes_a_stub_and_the_configuration(tmp_path: Path) -> None:
    spec = JobSpec.model_validate(
        {
            "name": "j",
            "code": {"dir": "/src/proj", "boot_file": "t.py"},
            "image": {"engine": "PyTorch", "version": "v"},
            "resources": {"flavor": "modelarts.vm.cpu.8u"},
            "inputs": [{"name": "data_url", "obs": "obs://bucket/in/"}],
            "outputs": [{"name": "train_url", "obs": "obs://bucket/out/"}],
        }
    )
    run = tmp_path / "run"
    paths = container_paths(spec, run / "ma-user")
    setup = prepare(
        run / "guard",
        run_dir=run,
        paths=paths,
        code_origin=Path("/src/proj"),
        input_origins=[Path("/data/in")],
        home=Path("/home/u"),
    )
    assert setup.env == {"MAJOB_GUARD": str(run / "guard" / "config.json")}
    stub = (setup.site_dir / "sitecustomize.py").read_text()
    assert "guard_site.py" in stub and "_guard.install(__file__)" in stub
    config = json.loads((run / "guard" / "config.json").read_text())
    cache = str(run / "cache" / "worker-0")  # the node's /cache takes writes as on ModelArts
    steps = str(run / "steps")  # majob's own step files, written from the script's step
    assert config["write_ok"] == [str(paths.outputs["train_url"]), str(paths.log_dir), cache, steps]
    assert config["read_watch"] == ["/data/in", "/home/u", "/src/proj"]
    assert config["code_copy"] == str(paths.code_dir)


def test_majobs_own_step_files_are_no_finding_outside_the_temp_dir(tmp_path: Path) -> None:
    # A project outside the temp dir (a user's, not a test's): the step file majob writes from
    # the script's optimizer step was reported as the script writing outside its outputs.
    import importlib.util

    from majob.runner import guard

    site = importlib.util.spec_from_file_location("guard_site_copy", guard._SITE_SOURCE)
    assert site is not None and site.loader is not None
    module = importlib.util.module_from_spec(site)
    site.loader.exec_module(module)
    run = tmp_path / "project" / ".majob" / "runs" / "r1"
    config = {
        "code_copy": str(run / "ma-user" / "code"),
        "code_origin": "/src/proj",
        "write_ok": [str(run / "ma-user" / "outputs"), str(run / guard.RUN_STEPS_DIR)],
        "container_root": str(run / "ma-user"),
        "read_ok": [],
        "read_watch": [],
        "home": "/home/u",
        "temp": ["/elsewhere/tmp"],
        "events_dir": str(tmp_path),
    }
    checker = module._Guard(config)
    checker.check(str(run / "steps" / "worker-0-rank0" / "majob_steps_0.jsonl"), True)
    assert not list(tmp_path.glob("events-*.jsonl"))
    checker.check(str(run / "stray.txt"), True)
    assert list(tmp_path.glob("events-*.jsonl"))  # the check itself still reports
