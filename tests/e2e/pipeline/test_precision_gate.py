"""``expect.precision`` on the debug stage (issue 39, the gate): the debug job's loss curve
against the local stage's recorded run of the same code, on the emulated cloud. A debug run
that trains like the local one opens the formal stage; one whose curve parts stops the
pipeline before it, says where, and the ledger and the checklist keep the verdict."""

from __future__ import annotations

from pathlib import Path

import majob
from majob.emulator.cloud import EmulatedCloud
from majob.pipeline.checklist import checklist
from majob.pipeline.checklist_item import Item
from majob.pipeline.digests import Fingerprint
from majob.pipeline.ledger import Ledger
from majob.pipeline.precision_gates import last_gate_verdict
from majob.pipeline.results import PipelineResult
from majob.spec.load import load_spec

from .conftest import SPEC

# The loss follows the learning rate: a debug stage given another lr trains differently.
SCRIPT = """\
import argparse, os
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--lr", type=float)
args, _ = parser.parse_known_args()
loss = 10 * args.lr
for epoch in range(args.epochs):
    loss /= 2
    print(f"epoch {epoch} loss={loss}", flush=True)
with open(os.path.join(args.train_url, "model.pth"), "w") as out:
    out.write(str(loss))
"""


def _project(project: Path, debug_override: str) -> Path:
    (project / "code" / "train.py").write_text(SCRIPT)
    spec = SPEC.format(name="tiny").replace(
        "stages:\n  debug: {hyperparameters: {epochs: 1}}",
        "stages:\n"
        f"  debug:\n    hyperparameters: {{epochs: 2{debug_override}}}\n"
        "    expect: {precision: {like: local, loss_rtol: 0.05}}\n",
    )
    path = project / "tiny.yaml"
    path.write_text(spec)
    return path


def _run(path: Path) -> tuple[PipelineResult, list[str]]:
    lines: list[str] = []
    with majob.Pipeline(
        str(path), profile="emulator", upload_inputs=True, report=lines.append
    ) as p:
        return p.run(until="formal"), lines


def _precision_item(path: Path) -> Item:
    spec = load_spec(path)
    with Ledger() as ledger:
        return next(i for i in checklist(spec, ledger, str(path)) if i.key == "precision")


def test_a_debug_run_that_trains_like_local_opens_the_formal_stage(
    project: Path, cloud: EmulatedCloud
) -> None:
    path = _project(project, "")
    result, lines = _run(path)
    assert [s.result for s in result.stages] == ["passed", "passed", "passed"], result.message
    said = [line for line in lines if "expect.precision" in line]
    assert said == [
        "[majob] expect.precision: debug against local: loss within loss_rtol 0.05 at all 2 points"
    ]
    spec = load_spec(path)
    with Ledger() as ledger:
        verdict = last_gate_verdict(ledger, "tiny", Fingerprint.of(spec).code_digest)
        debug = ledger.records("tiny", stage="debug")[0]
        local = ledger.records("tiny", stage="local")[0]
    assert verdict is not None and verdict.passed
    assert (verdict.record_id, verdict.reference_id, verdict.compared) == (debug.id, local.id, 2)
    item = _precision_item(path)
    assert item.status == "done" and "within loss_rtol" in item.detail


def test_a_debug_run_whose_curve_parts_stops_before_formal(
    project: Path, cloud: EmulatedCloud
) -> None:
    path = _project(project, ", lr: 0.2")  # the local stage runs the spec's lr 0.1
    result, _ = _run(path)
    assert [s.result for s in result.stages] == ["passed", "failed"]
    reason = result["debug"].reason
    assert reason == (
        "expect.precision: debug against local: the loss curves part at point 1 of 2: "
        "local 0.5, debug 1 (100.0% apart > loss_rtol 0.05)"
    )
    assert result.message == f"pipeline stopped: the debug stage failed: {reason}"
    item = _precision_item(path)
    assert item.status == "todo" and "part at point 1" in item.detail
