"""Stages never share outputs: each cloud stage writes under its own folder of every output, so
a formal job's container never gets the debug job's checkpoints; the pre-flight refuses a
checkpoint folder another stage, another spec or an unknown writer filled (nothing uploaded, no
job); ``--resume-from`` copies checkpoints in on purpose; a re-submit of the same stage and spec
resumes. Real jobs on the emulated cloud, through the official clients."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

from click.testing import Result
from typer.testing import CliRunner

import majob
from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from majob.pipeline.ledger import Ledger
from majob.service.base import JobFilter
from majob.service.ckpt_owner import OWNER_PREFIX, Owner, read_owner, write_owner
from majob.service.rest import RestTrainingService
from majob.spec.digest import cloud_spec_digest
from majob.spec.load import load_spec
from majob.storage.obs import ObsObjectStore
from majob.storage.uri import ObsUri

runner = CliRunner()
BUCKET = "majob-demo"
DEBUG_CKPT = ObsUri(BUCKET, "tiny/out/debug/ckpt/")
FORMAL_CKPT = ObsUri(BUCKET, "tiny/out/formal/ckpt/")

# Says every file its output holds when it starts (what the container was given), resumes the
# way an ordinary script does (the number of checkpoints it finds), saves the next one.
SCRIPT = """\
import argparse, json, os, sys
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
parser.add_argument("--tag", default="formal")
args, _ = parser.parse_known_args()
found = sorted(
    os.path.relpath(os.path.join(root, name), args.train_url)
    for root, _, names in os.walk(args.train_url) for name in names
)
print("found " + json.dumps(found), flush=True)
ckpt = os.path.join(args.train_url, "ckpt")
os.makedirs(ckpt, exist_ok=True)
epoch = len([name for name in found if name.startswith("ckpt/")])
with open(os.path.join(ckpt, f"epoch-{epoch:04d}.pt"), "w") as out:
    out.write(args.tag)
with open(os.path.join(args.train_url, "model.pth"), "w") as out:
    out.write(args.tag)
print(f"step {epoch}", flush=True)
sys.exit(FAIL)
"""
BLOCK = """\
fault_tolerance: {retries: 1, checkpoints: train_url/ckpt/}
stages: {debug: {hyperparameters: {tag: debug}}}
"""


def _project(project: Path, fail: int = 0) -> Path:
    (project / "code" / "train.py").write_text(SCRIPT.replace("FAIL", str(fail)))
    spec = project / "spec.yaml"
    if "fault_tolerance" not in spec.read_text():
        spec.write_text(spec.read_text() + BLOCK)
    return spec


def _submit(spec: Path, stage: str, *args: str) -> Result:
    command = ["submit", str(spec), "--profile", "emulator", "--upload-inputs", "--wait"]
    force = ["--force", "--reason", "the test's"] if stage == "formal" else []
    return runner.invoke(app, [*command, "--stage", stage, *force, *args])


def _found(output: str) -> list[str]:
    """What the job's container held in its output when the script started (the last run's)."""
    lines = [line for line in output.splitlines() if "found [" in line]
    assert lines, output
    listed: list[str] = json.loads(lines[-1].split("found ", 1)[1])
    return listed


def _keys(store: ObsObjectStore, folder: ObsUri) -> list[str]:
    return sorted(i.key[len(folder.key) :] for i in store.list_all(folder.bucket, folder.key))


def _jobs(service: RestTrainingService) -> list[str]:
    jobs, _ = service.search(JobFilter())
    return sorted(job.name for job in jobs)


def test_a_formal_job_never_sees_the_debug_jobs_checkpoint(
    project: Path, store: ObsObjectStore
) -> None:
    spec = _project(project)
    debug = _submit(spec, "debug")
    assert debug.exit_code == 0, debug.output
    assert _found(debug.output) == []
    assert _keys(store, DEBUG_CKPT) == ["epoch-0000.pt"]  # the debug job wrote a checkpoint
    formal = _submit(spec, "formal")
    assert formal.exit_code == 0, formal.output
    assert _found(formal.output) == []  # its container got nothing of the debug job's
    assert store.get_bytes(BUCKET, FORMAL_CKPT.key + "epoch-0000.pt") == b"formal"
    assert store.get_bytes(BUCKET, DEBUG_CKPT.key + "epoch-0000.pt") == b"debug"
    # The stage is judged by its own folder's files only.
    (record,) = Ledger().records("tiny", stage="formal")
    assert record.outputs == ("train_url/ckpt/epoch-0000.pt", "train_url/model.pth")
    owner = read_owner(store, FORMAL_CKPT)
    assert owner is not None and owner.job_id and (owner.stage, owner.state) == ("formal", "owned")
    assert owner.spec_digest == cloud_spec_digest(load_spec(spec))


def test_a_folder_an_unknown_writer_filled_is_refused_and_nothing_is_sent(
    project: Path, store: ObsObjectStore, service: RestTrainingService
) -> None:
    spec = _project(project)
    store.put_bytes(BUCKET, FORMAL_CKPT.key + "stray.pt", b"by hand")
    refused = _submit(spec, "formal")
    assert refused.exit_code == 2, refused.output
    assert (
        "error: fault_tolerance.checkpoints: obs://majob-demo/tiny/out/formal/ckpt/ holds 1 "
        "object that majob has no record of writing (another tool, by hand, or an older majob), "
        "and the formal job would download them and could resume from them; to resume from them "
        "on purpose pass --resume-from formal, else empty the folder first "
        "(majob obs rm -r obs://majob-demo/tiny/out/formal/ckpt/)"
    ) in refused.output
    assert _keys(store, ObsUri(BUCKET, "tiny/code/")) == []  # no code sent
    assert _keys(store, ObsUri(BUCKET, "tiny/data/")) == []  # no input uploaded
    assert _keys(store, ObsUri(BUCKET, OWNER_PREFIX)) == []  # no owner recorded
    assert _jobs(service) == []
    # Said on purpose, the folder's contents are what the job resumes from.
    accepted = _submit(spec, "formal", "--resume-from", "formal")
    assert accepted.exit_code == 0, accepted.output
    assert "holds 1 object (--resume-from formal): the job resumes from them" in accepted.output
    assert _found(accepted.output) == ["ckpt/stray.pt"]


def test_a_folder_another_spec_wrote_is_refused(project: Path, store: ObsObjectStore) -> None:
    spec = _project(project)
    first = _submit(spec, "formal")
    assert first.exit_code == 0, first.output
    written = read_owner(store, FORMAL_CKPT)
    assert written is not None
    changed = _submit(spec, "formal", "--set", "hyperparameters.sleep=0.1")
    assert changed.exit_code == 2, changed.output
    new_digest = cloud_spec_digest(load_spec(spec, overrides=["hyperparameters.sleep=0.1"]))
    assert (
        f"holds 1 object written by the formal stage (job tiny {written.job_id}, spec "
        f"{written.spec_digest[:8]}, {written.written}), for another spec: this one is "
        f"{new_digest[:8]}, and the formal job would download them" in changed.output
    )


def test_a_completed_jobs_checkpoints_are_removed_and_another_checkout_is_the_same_spec(
    project: Path, store: ObsObjectStore
) -> None:
    """A second clone of the project (another directory, so other local paths: another gate
    digest) submitting the stage again is not refused as another spec; and as the job before
    completed, its checkpoints are removed: the new job starts afresh, not past the last epoch."""
    spec = _project(project)
    first = _submit(spec, "formal")
    assert first.exit_code == 0, first.output
    written = read_owner(store, FORMAL_CKPT)
    assert written is not None
    clone = project.parent / "second-clone"
    shutil.copytree(project, clone)
    again = _submit(clone / "spec.yaml", "formal")
    assert again.exit_code == 0, again.output
    assert (
        f"checkpoints: obs://majob-demo/tiny/out/formal/ckpt/ held 1 object of job tiny "
        f"({written.job_id}), which completed: removed, this job starts afresh"
    ) in again.output
    assert _found(again.output) == ["model.pth"]  # the last job's output, not its checkpoints
    assert _keys(store, FORMAL_CKPT) == ["epoch-0000.pt"]  # the new job's own


def test_resume_from_debug_copies_its_checkpoints_and_nothing_else(
    project: Path, store: ObsObjectStore
) -> None:
    spec = _project(project)
    assert _submit(spec, "debug").exit_code == 0
    formal = _submit(spec, "formal", "--resume-from", "debug")
    assert formal.exit_code == 0, formal.output
    assert (
        "checkpoints: resumed from debug: copied 1 object (5 B) from "
        "obs://majob-demo/tiny/out/debug/ckpt/ to obs://majob-demo/tiny/out/formal/ckpt/"
    ) in formal.output
    # Exactly the copied checkpoint: not the debug job's model.pth or out.txt beside it.
    assert _found(formal.output) == ["ckpt/epoch-0000.pt"]
    assert _keys(store, FORMAL_CKPT) == ["epoch-0000.pt", "epoch-0001.pt"]
    assert store.get_bytes(BUCKET, FORMAL_CKPT.key + "epoch-0001.pt") == b"formal"
    owner = read_owner(store, FORMAL_CKPT)
    assert owner is not None and owner.resumed_from == DEBUG_CKPT.uri
    # Copying again into a folder that has moved on would mix: refused.
    again = _submit(spec, "formal", "--resume-from", "debug")
    assert again.exit_code == 2, again.output
    assert "which already holds 2 objects (written by the formal stage (job tiny" in again.output


def test_resume_from_a_stage_with_no_checkpoints_is_refused(
    project: Path, service: RestTrainingService
) -> None:
    spec = _project(project)
    refused = _submit(spec, "formal", "--resume-from", "debug")
    assert refused.exit_code == 2, refused.output
    assert (
        "fault_tolerance.checkpoints: --resume-from debug: obs://majob-demo/tiny/out/debug/ckpt/ "
        "holds no checkpoints; run that stage first, or name a folder that holds them"
    ) in refused.output
    assert _jobs(service) == []
    bad = _submit(spec, "formal", "--resume-from", "yesterday")
    assert bad.exit_code == 2
    assert "--resume-from 'yesterday': choose debug, formal or an obs://bucket/folder/" in (
        bad.output
    )


def test_a_resubmit_of_the_same_stage_and_spec_after_a_failure_resumes(
    project: Path, store: ObsObjectStore
) -> None:
    spec = _project(project, fail=3)  # saves a checkpoint, then fails (no restart: exit 3)
    failed = _submit(spec, "formal")
    assert failed.exit_code == 1, failed.output
    assert _keys(store, FORMAL_CKPT) == ["epoch-0000.pt"]
    _project(project, fail=0)  # the code fixed; the spec unchanged
    fixed = _submit(spec, "formal")
    assert fixed.exit_code == 0, fixed.output
    assert "holds 1 object (this stage and spec): the job resumes from them" in fixed.output
    assert _found(fixed.output) == ["ckpt/epoch-0000.pt", "model.pth"]
    assert _keys(store, FORMAL_CKPT) == ["epoch-0000.pt", "epoch-0001.pt"]


def test_the_pipeline_and_the_python_api_take_resume_from(
    project: Path, store: ObsObjectStore
) -> None:
    spec = _project(project)
    said: list[str] = []
    with majob.Pipeline(
        spec, profile="emulator", upload_inputs=True, resume_from="debug", report=said.append
    ) as pipeline:
        result = pipeline.run()
    assert result.ok, "\n".join(said)
    assert _keys(store, DEBUG_CKPT) == ["epoch-0000.pt"]  # debug: its own, empty folder
    assert _keys(store, FORMAL_CKPT) == ["epoch-0000.pt", "epoch-0001.pt"]  # formal: debug's
    assert any("resumed from debug: copied 1 object" in line for line in said)
    # majob.submit takes it too: the debug stage's own folder, as it is.
    job = majob.submit(spec, "debug", profile="emulator", resume_from="debug")
    assert job.service is not None
    try:
        assert job.wait(timeout=120).job.succeeded
    finally:
        job.service.close()
    assert _keys(store, DEBUG_CKPT) == ["epoch-0000.pt", "epoch-0001.pt"]


def test_a_copy_made_before_a_refused_create_is_taken_as_it_is(
    project: Path, store: ObsObjectStore, cloud: EmulatedCloud, service: RestTrainingService
) -> None:
    spec = _project(project)
    assert _submit(spec, "debug").exit_code == 0
    cloud.modelarts.add_fault(
        status=400, code="ModelArts.0101", method="POST", path="training-jobs$", count=1
    )
    refused = _submit(spec, "formal", "--resume-from", "debug")
    assert refused.exit_code != 0, refused.output
    assert _jobs(service) == ["tiny-debug"]
    assert _keys(store, FORMAL_CKPT) == ["epoch-0000.pt"]  # the copy, whole, recorded
    again = _submit(spec, "formal", "--resume-from", "debug")
    assert again.exit_code == 0, again.output
    assert "holds 1 object (--resume-from debug): the job resumes from them" in again.output
    assert _found(again.output) == ["ckpt/epoch-0000.pt"]


def test_a_copy_that_did_not_finish_is_refused(project: Path, store: ObsObjectStore) -> None:
    spec = _project(project)
    digest = cloud_spec_digest(load_spec(spec))
    stopped = Owner(FORMAL_CKPT.uri, "formal", "tiny", digest, "tiny", state="copying")
    write_owner(store, replace(stopped, resumed_from=DEBUG_CKPT.uri))
    store.put_bytes(BUCKET, FORMAL_CKPT.key + "epoch-0000.pt", b"half")
    refused = _submit(spec, "formal")
    assert refused.exit_code == 2, refused.output
    assert (
        f"holds 1 object from a copy of {DEBUG_CKPT.uri} that did not finish ({stopped.written})"
    ) in refused.output
