"""Each cloud stage writes under a folder of its own in every output (``JobSpec.at_stage``,
``spec/stage_outputs.py``): the default ``<output>/<stage>/``, a folder a stage names itself, and
the refusals of a named folder that is not an OBS directory, names no output, is the local
stage's, or overlaps the other stage's."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.errors import SpecError
from majob.spec.digest import spec_digest
from majob.spec.load import load_spec
from majob.spec.set_checks import shadowed_sets
from majob.storage.uri import MAX_KEY_BYTES

TWO_OUTPUTS = """\
  - name: model_url
    obs: obs://other-bucket/models/
"""


def _spec_file(project: Path, stages: str = "", outputs: str = "") -> Path:
    text = (project / "spec.yaml").read_text()
    if outputs:
        text = text.replace("    local: out\n", "    local: out\n" + outputs)
    if stages:
        text = text.replace("stages:\n", "stages:\n" + stages, 1)
    path = project / "spec.yaml"
    path.write_text(text)
    return path


def _problems(path: Path, overrides: tuple[str, ...] = ()) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec(path, overrides=overrides)
    return [f"{p.line}:{p.col} {p.path}: {p.message}" for p in caught.value.problems]


def _folders(path: Path, stage: str) -> dict[str, str]:
    effective = load_spec(path).at_stage(stage)  # type: ignore[arg-type]
    return {o.name: o.obs.uri for o in effective.outputs}


def test_each_cloud_stage_writes_under_its_own_folder_of_every_output(project: Path) -> None:
    path = _spec_file(project, outputs=TWO_OUTPUTS)
    assert _folders(path, "debug") == {
        "train_url": "obs://my-bucket/out/debug/",
        "model_url": "obs://other-bucket/models/debug/",
    }
    assert _folders(path, "formal") == {
        "train_url": "obs://my-bucket/out/formal/",
        "model_url": "obs://other-bucket/models/formal/",
    }
    # The local stage writes to the stand-ins; its spec keeps the spec's folders.
    assert _folders(path, "local") == {
        "train_url": "obs://my-bucket/out/",
        "model_url": "obs://other-bucket/models/",
    }


def test_a_stage_may_name_an_exact_folder_for_an_output(project: Path) -> None:
    named = "  formal:\n    outputs: {train_url: 'obs://release-bucket/mnist/v1/'}\n"
    path = _spec_file(project, stages=named, outputs=TWO_OUTPUTS)
    assert _folders(path, "formal") == {
        "train_url": "obs://release-bucket/mnist/v1/",
        "model_url": "obs://other-bucket/models/formal/",  # not named: the stage's default
    }
    assert _folders(path, "debug")["train_url"] == "obs://my-bucket/out/debug/"


def test_a_stages_spec_is_its_own_stage_spec_and_no_other_stages(project: Path) -> None:
    spec = load_spec(_spec_file(project))
    debug = spec.at_stage("debug")
    assert debug.at_stage("debug") is debug  # not obs://my-bucket/out/debug/debug/
    with pytest.raises(ValueError, match="debug stage's spec, not formal's"):
        debug.at_stage("formal")
    assert spec.at_stage("debug").outputs == debug.outputs  # the spec itself is unchanged


def test_the_stages_folders_leave_the_spec_digest_alone(project: Path) -> None:
    plain = load_spec(_spec_file(project))
    named = "  formal:\n    outputs: {train_url: 'obs://release-bucket/v1/'}\n"
    with_named = load_spec(_spec_file(project, stages=named))
    # One digest for every stage (the gates compare it), whatever folders the stages name.
    assert spec_digest(plain) == spec_digest(with_named)


@pytest.mark.parametrize(
    ("stages", "expected"),
    [
        (
            "  formal:\n    outputs: {model_url: 'obs://my-bucket/m/'}\n",
            "stages.formal.outputs.model_url: 'model_url' is not an output of this spec "
            "(outputs: train_url)",
        ),
        (
            "  formal:\n    outputs: {train_url: 'obs://my-bucket/file.pt'}\n",
            "stages.formal.outputs.train_url: obs://my-bucket/file.pt must be a directory: "
            "end it with '/' (obs://my-bucket/file.pt/)",
        ),
        (
            "  formal:\n    outputs: {train_url: 'https://my-bucket/x/'}\n",
            "stages.formal.outputs.train_url: 'https://my-bucket/x/' is not an OBS path: "
            "scheme 'https' is not 'obs'",
        ),
        (
            "  formal:\n    outputs: {train_url: 'obs://my-bucket/out/'}\n",
            "stages.formal.outputs.train_url: the formal stage's train_url folder "
            "obs://my-bucket/out/ and the debug stage's train_url folder obs://my-bucket/out/debug/ "
            "overlap, so one stage would read or list the other's files; give each stage a folder "
            "of its own",
        ),
    ],
    ids=["no such output", "not a directory", "not obs", "holds the debug folder"],
)
def test_a_named_folder_that_cannot_be_the_stages_is_refused_where_it_is_written(
    project: Path, stages: str, expected: str
) -> None:
    (problem,) = _problems(_spec_file(project, stages=stages))
    assert problem.startswith("26:")  # the line of the folder in spec.yaml
    assert problem.split(" ", 1)[1] == expected


def test_the_local_stage_names_no_folder(project: Path) -> None:
    (problem,) = _problems(
        _spec_file(project), ("stages.local.outputs.train_url=obs://my-bucket/l/",)
    )
    assert problem == (
        "0:0 stages.local.outputs.train_url: the local stage writes each output to its local "
        "stand-in, not to OBS; set outputs.train_url.local instead, or name a folder for debug "
        "or formal"
    )


def test_two_stages_naming_one_folder_is_refused(project: Path) -> None:
    path = _spec_file(project)
    problems = _problems(
        path,
        (
            "stages.debug.outputs.train_url=obs://my-bucket/shared/",
            "stages.formal.outputs.train_url=obs://my-bucket/shared/run1/",
        ),
    )
    assert [p.split(" ", 2)[1] for p in problems] == ["stages.formal.outputs.train_url:"]
    assert "obs://my-bucket/shared/run1/ and the debug stage's train_url folder " in problems[0]


def test_an_output_folder_with_no_room_for_the_stages_is_refused(project: Path) -> None:
    long_key = "k" * (MAX_KEY_BYTES - len("formal/")) + "/"  # its formal/ is 1 byte over
    (problem,) = _problems(_spec_file(project), (f"outputs.0.obs=obs://my-bucket/{long_key}",))
    assert problem.split(" ", 2)[1] == "outputs[0].obs:"
    assert "leaves no room for the stages' folders (<stage>/)" in problem


def test_a_set_of_an_output_folder_a_stage_names_is_warned_about(project: Path) -> None:
    named = "  formal:\n    outputs: {train_url: 'obs://release-bucket/v1/'}\n"
    spec = load_spec(_spec_file(project, stages=named))
    (warning,) = shadowed_sets(spec, ["outputs.0.obs=obs://my-bucket/new/"], ["debug", "formal"])
    assert warning == (
        "--set outputs.0.obs=obs://my-bucket/new/: the formal stage runs with "
        "stages.formal.outputs.train_url='obs://release-bucket/v1/' from the spec (a stage's "
        "override wins); to change it there, --set stages.formal.outputs.train_url="
        "obs://my-bucket/new/"
    )
