"""Reading msprobe's compare CSV, pairing dumps, the loss series, the verdict record."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.precision import probe
from majob.precision.compare import pairs_to_compare, summarise_csv
from majob.precision.record import last_precision_check, save_check
from majob.precision.series import compare_series, read_loss
from majob.precision.sources import RunDump, from_directory

# The columns msprobe 26.2 writes (compare_result_*.csv), in its order.
COLUMNS = ["NPU Name", "Bench Name", "Max diff", "Result", "Err_message", "NPU_Stack_Info"]
STACK = (
    "['File /venv/lib/python3.11/site-packages/torch/nn/modules/linear.py, line 134, in forward, "
    "\\n return F.linear(input, self.weight, self.bias)', "
    "'File /runs/x/ma-user/modelarts/user-job-dir/code/train.py, line 29, in forward, "
    "\\n x = F.relu(self.fc1(x))']"
)


def write_csv(path: Path, rows: list[dict[str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({c: row.get(c, "N/A") for c in COLUMNS})
    return path


def row(name: str, result: str, bench: str | None = None, stack: str = "N/A", diff: str = "0"):
    return {"NPU Name": name, "Bench Name": bench or name, "Result": result,
            "Max diff": diff, "NPU_Stack_Info": stack, "Err_message": "[]"}  # fmt: skip


def test_the_first_row_not_passing_names_its_api_step_and_the_users_line(tmp_path: Path) -> None:
    rows = [
        row("Functional.linear.0.forward.input.0", "pass", stack=STACK),
        row("Functional.linear.0.forward.output.0", "pass"),
        row("Functional.linear.1.forward.input.0", "pass", stack=STACK),
        row("Functional.linear.1.forward.output.0", "warning", diff="0.5"),
        row("Functional.relu.0.forward.output.0", "error", diff="3.0"),
        row("Functional.gelu.0.forward.output.0", "N/A", bench="N/A"),
        row("Functional.linear.1.backward.input.0", "error", diff="0.1"),
    ]
    result = summarise_csv(write_csv(tmp_path / "r.csv", rows), step=1, rank="rank0")
    assert result.counts == {"pass": 3, "warning": 1, "error": 2, "unmatched": 1}
    assert (result.matched, result.total) == (6, 7)
    first = result.first_bad
    assert first is not None
    assert (first.api, first.result, first.step) == ("Functional.linear.1.forward", "warning", 1)
    assert first.where == "code/train.py:29 in forward"  # the user's frame, not torch's
    assert result.worst[0].name == "Functional.relu.0.forward.output.0"  # the largest max diff
    backward = next(r for r in result.worst if ".backward." in r.name)
    assert backward.where == "code/train.py:29 in forward"  # its forward call's line


def dump(root: Path, step: int, rank: str, content: str | None) -> None:
    directory = root / f"step{step}" / rank
    directory.mkdir(parents=True)
    if content is not None:
        (directory / "dump.json").write_text(content, encoding="utf-8")


GOOD = json.dumps({"task": "statistics", "data": {"Functional.relu.0.forward": {}}})


def test_ranks_pair_by_name_and_a_crashed_runs_partial_dump_is_skipped_with_a_reason(
    tmp_path: Path,
) -> None:
    golden, target = tmp_path / "a", tmp_path / "b"
    for root in (golden, target):
        dump(root, 0, "rank0", GOOD)
        dump(root, 0, "rank1", GOOD)
    dump(golden, 1, "rank0", GOOD)
    dump(target, 1, "rank0", GOOD[:20])  # cut short: the process was killed while writing
    pairs, skipped = pairs_to_compare(golden, target)
    assert [(s, r) for s, r, _, _ in pairs] == [(0, "rank0"), (0, "rank1")]
    assert skipped == [
        "step 1 rank0: B's dump.json is missing or cut short (a crashed run?); not compared"
    ]


def test_loss_series_come_from_the_bootstraps_records_averaged_over_ranks(tmp_path: Path) -> None:
    dump_dir = tmp_path / "precision-dump"
    dump_dir.mkdir()
    (dump_dir / "loss-rank0.jsonl").write_text(
        '{"step": 0, "loss": 2.0}\n{"step": 1, "loss": 1.0}\n{"step": 2, "lo', encoding="utf-8"
    )
    (dump_dir / "loss-rank1.jsonl").write_text(
        '{"step": 0, "loss": 4.0}\n{"step": 1, "loss": 3.0}\n', encoding="utf-8"
    )
    values, source = read_loss(RunDump("a", dump_dir, tmp_path))
    assert (values, source) == ([3.0, 2.0], "loss-rank*.jsonl")


def test_loss_series_fall_back_to_the_logs(tmp_path: Path) -> None:
    log = tmp_path / "worker-0.log"
    log.write_text("epoch 0 step 0 loss: 2.5\nsomething else\nstep 1 loss=1.25e-1\n")
    assert read_loss(RunDump("a", None, tmp_path, (log,))) == ([2.5, 0.125], "logs")


def test_the_first_step_beyond_tolerance_is_reported() -> None:
    same = compare_series([2.0, 1.5, 1.0], [2.0, 1.5, 1.0], rtol=1e-3, atol=0, sources=("", ""))
    assert same.first_beyond is None
    apart = compare_series([2.0, 1.5, 1.0], [2.0, 1.6, 1.0], rtol=1e-3, atol=0, sources=("", ""))
    assert apart.first_beyond == 1
    assert apart.max_abs_diff == pytest.approx(0.1)


def test_the_last_check_is_recorded_per_spec(tmp_path: Path) -> None:
    assert last_precision_check("mnist", root=tmp_path) is None
    save_check("mnist", verdict="fail", golden="a", target="b", problems=["x"], root=tmp_path)
    save_check("mnist", verdict="pass", golden="a", target="c", problems=[], root=tmp_path)
    check = last_precision_check("mnist", root=tmp_path)
    assert check is not None
    assert (check.passed, check.target, check.problems) == (True, "c", ())
    assert last_precision_check("other", root=tmp_path) is None


def test_a_run_directory_finds_its_dump_among_the_outputs(tmp_path: Path) -> None:
    outputs = tmp_path / "run" / "ma-user" / "modelarts" / "outputs" / "train_url_0"
    dump(outputs / "precision-dump", 0, "proc1", GOOD)
    (outputs / "model.pth").write_bytes(b"")
    (tmp_path / "run" / "record.json").write_text('{"spec_name": "mnist"}')
    found = from_directory(tmp_path / "run", "run")
    assert found.dump_dir == outputs / "precision-dump"
    assert found.checkpoint() == outputs / "model.pth"
    assert found.spec_name == "mnist"


def test_a_bare_dump_beside_another_finds_no_checkpoint_in_it(tmp_path: Path) -> None:
    # two dumps copied side by side: B's tensors are not A's final checkpoint
    for name in ("a", "b"):
        dump(tmp_path / name, 0, "proc1", GOOD)
    (tmp_path / "b" / "step0" / "proc1" / "dump_tensor_data").mkdir()
    (tmp_path / "b" / "step0" / "proc1" / "dump_tensor_data" / "Torch.add.0.pt").write_bytes(b"")
    assert from_directory(tmp_path / "a", "a").checkpoint() is None
    # majob's own layout keeps working: the model beside <output>/precision-dump
    out = tmp_path / "out"
    dump(out / "precision-dump", 0, "proc1", GOOD)
    (out / "model.pt").write_bytes(b"")
    (out / "other" / "precision-dump").mkdir(parents=True)
    (out / "other" / "precision-dump" / "x.pt").write_bytes(b"")
    assert from_directory(out / "precision-dump", "out").checkpoint() == out / "model.pt"


def test_compare_without_a_dump_says_how_to_make_one(tmp_path: Path) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "a"), str(tmp_path / "b")])
    assert result.exit_code == 2, result.output
    assert f"error: {tmp_path / 'a'} and {tmp_path / 'b'}: no dump there" in result.output
    assert "majob run SPEC --dump" in result.output


def test_compare_without_msprobe_gives_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(probe, "MODULE", "msprobe_not_installed_here")
    result = CliRunner().invoke(app, ["compare", str(tmp_path), str(tmp_path)])
    assert result.exit_code != 0
    assert result.output.splitlines()[0] == ("error: mindstudio-probe (msprobe) is not installed")
    assert "pip install 'majob[precision]'" in result.output
