"""The pieces of a checkpoint folder's claim that need no cloud: the owner record's format and
where it is kept, and what ``--resume-from`` names."""

from __future__ import annotations

import json

import pytest

from majob.errors import UserInputError
from majob.service.checkpoints import resume_source
from majob.service.ckpt_owner import OWNER_PREFIX, Owner, owner_uri
from majob.spec.models import JobSpec
from majob.storage.uri import ObsUri

SPEC = {
    "name": "tiny",
    "code": {"dir": ".", "boot_file": "train.py", "obs": "obs://bkt/tiny/code/"},
    "image": {"engine": "PyTorch", "version": "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64"},
    "resources": {"flavor": "modelarts.vm.cpu.8u"},
    "outputs": [{"name": "train_url", "obs": "obs://bkt/tiny/out/"}],
    "fault_tolerance": {"retries": 1, "checkpoints": "train_url/ckpt/"},
}


def test_an_owner_record_round_trips_and_anything_else_is_none() -> None:
    owner = Owner("obs://bkt/tiny/out/formal/ckpt/", "formal", "tiny", "ab" * 32, "tiny", "j-1")
    assert Owner.from_json(owner.to_json()) == owner
    loaded = json.loads(owner.to_json())
    for broken in (
        b"\xff\xfe not json",
        b"[]",
        json.dumps({**loaded, "format": 2}).encode(),  # a later majob's: not read as ours
        json.dumps({k: v for k, v in loaded.items() if k != "stage"}).encode(),
        json.dumps({**loaded, "state": "half"}).encode(),
        json.dumps({**loaded, "job_id": 7}).encode(),
    ):
        assert Owner.from_json(broken) is None


def test_the_record_is_outside_the_folder_and_its_output() -> None:
    folder = ObsUri.parse("obs://bkt/tiny/out/formal/ckpt/")
    where = owner_uri(folder)
    assert where.bucket == "bkt" and where.key.startswith(OWNER_PREFIX)
    assert not where.key.startswith("tiny/")
    assert owner_uri(ObsUri.parse("obs://bkt/tiny/out/debug/ckpt/")) != where


def test_resume_from_names_a_stage_or_an_obs_folder() -> None:
    spec = JobSpec.model_validate(SPEC)
    assert resume_source(spec, "formal", "debug").folder.uri == "obs://bkt/tiny/out/debug/ckpt/"
    assert resume_source(spec, "formal", "formal").folder.uri == "obs://bkt/tiny/out/formal/ckpt/"
    assert resume_source(spec, "formal", "obs://other/ckpt").folder.uri == "obs://other/ckpt/"
    assert resume_source(spec, "debug", "/other/run1/").folder.uri == "obs://other/run1/"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("local", "--resume-from local: the local stage's checkpoints are on this machine"),
        ("last-week", "--resume-from 'last-week': choose debug, formal or an obs://bucket/folder/"),
        ("obs://BAD/x/", "bucket name 'BAD' may hold only lower-case letters"),
    ],
)
def test_resume_from_anything_else_is_refused(text: str, message: str) -> None:
    with pytest.raises(UserInputError, match=message.replace("(", r"\(").replace(".", r"\.")):
        resume_source(JobSpec.model_validate(SPEC), "formal", text)


def test_resume_from_needs_a_checkpoint_folder() -> None:
    spec = JobSpec.model_validate({**SPEC, "fault_tolerance": {}})
    with pytest.raises(UserInputError, match="the spec has no checkpoint folder to resume from"):
        resume_source(spec, "formal", "debug")
