"""The first NaN/Inf of a dump (majob/precision/nonfinite.py) over synthetic dumps in msprobe's
layout: ``step<N>/<rank>/{dump,stack,construct}.json`` and ``loss-rank<R>.jsonl``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from majob.precision.dumped import dump_summary
from majob.precision.nonfinite import compare_problems, scan

NAN, INF = math.nan, math.inf


def tensor(low: float = -1.0, high: float = 1.0, **extra: object) -> dict[str, object]:
    """One tensor entry as msprobe's statistics dump writes it."""
    return {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4, 4],
            "Max": high, "Min": low, "Mean": 0.0, "Norm": 1.0, "requires_grad": True} | extra  # fmt: skip


def call(inputs: list[dict[str, object]], outputs: list[dict[str, object]]) -> dict[str, object]:
    return {"input_args": inputs, "input_kwargs": {}, "output": outputs}


FINE = call([tensor()], [tensor()])


def write_rank(
    root: Path, step: int, rank: str, apis: dict[str, dict[str, object]], task: str = "statistics"
) -> Path:
    """A whole rank dir: dump.json (NaN written as msprobe's json writes it), stack, construct."""
    rank_dir = root / f"step{step}" / rank
    rank_dir.mkdir(parents=True)
    dump = {"task": task, "level": "L1", "framework": "pytorch", "dump_data_dir": None}
    if task == "tensor":
        dump["dump_data_dir"] = str(rank_dir / "dump_tensor_data")
    (rank_dir / "dump.json").write_text(json.dumps(dump | {"data": apis}), encoding="utf-8")
    frames = [
        "File /venv/lib/python3.11/site-packages/torch/nn/modules/linear.py, line 134, in forward, "
        "\n return F.linear(input, self.weight, self.bias)",
        f"File /runs/x/ma-user/modelarts/user-job-dir/code/train.py, line {10 + len(apis)}, in "
        "forward, \n h = self.layer(x)",
    ]
    stack = {str(i): [[name], frames] for i, name in enumerate(apis)}
    (rank_dir / "stack.json").write_text(json.dumps(stack), encoding="utf-8")
    (rank_dir / "construct.json").write_text("{}", encoding="utf-8")
    return rank_dir


def test_the_origin_is_the_first_api_whose_inputs_are_finite_and_outputs_not(
    tmp_path: Path,
) -> None:
    write_rank(tmp_path, 0, "rank0", {"Functional.linear.0.forward": FINE})
    write_rank(
        tmp_path,
        1,
        "rank0",
        {
            "Functional.linear.0.forward": FINE,
            "Torch.empty.0.forward": call([], [tensor(NAN, NAN)]),  # memory msprobe ignores too
            "Torch.log.0.forward": call([tensor()], [tensor(NAN, NAN)]),
            "Functional.linear.1.forward": call([tensor(NAN, NAN)], [tensor(NAN, NAN)]),
        },
    )
    first = scan(tmp_path).first
    assert first is not None
    assert (first.step, first.rank, first.api, first.side) == (
        1,
        "rank0",
        "Torch.log.0.forward",
        "output",
    )
    assert first.origin and first.value == "nan"
    assert first.where == "code/train.py:14 in forward"  # the user's frame from stack.json
    (line,) = scan(tmp_path).lines()
    assert "Torch.log.0.forward output at step 1, rank0 (the origin" in line


def test_nan_that_comes_in_through_an_input_names_that_api_and_its_input(tmp_path: Path) -> None:
    write_rank(
        tmp_path,
        0,
        "rank0",
        {
            "Functional.linear.0.forward": call([tensor(NAN, NAN), tensor()], [tensor(NAN, NAN)]),
            "Torch.relu.0.forward": call([tensor(NAN, NAN)], [tensor(NAN, NAN)]),
        },
    )
    result = scan(tmp_path)
    first = result.first
    assert first is not None
    assert (first.step, first.api, first.side, first.origin) == (
        0, "Functional.linear.0.forward", "input", False,
    )  # fmt: skip
    lines = result.lines()
    assert "at step 0" in lines[0] and "came in through this input" in lines[0]
    assert (
        lines[1]
        == "  NaN/Inf from step 0: Functional.linear.0.forward is the first API, check the data"
    )


def test_steps_are_ordered_by_number_and_inf_is_named_as_such(tmp_path: Path) -> None:
    write_rank(tmp_path, 10, "rank0", {"Torch.log.0.forward": call([tensor()], [tensor(NAN, NAN)])})
    write_rank(tmp_path, 2, "rank0", {"Torch.exp.0.forward": call([tensor()], [tensor(0.0, INF)])})
    write_rank(tmp_path, 3, "rank0", {"Functional.linear.0.forward": FINE})
    first = scan(tmp_path).first
    assert first is not None
    assert (first.step, first.api, first.value) == (2, "Torch.exp.0.forward", "inf")
    assert first.describe().startswith("Inf in Torch.exp.0.forward output at step 2")


def test_across_ranks_the_origin_wins_over_a_rank_that_only_received_nan(tmp_path: Path) -> None:
    # rank0's NaN comes in through its first input; rank1 makes it: rank1 is named.
    write_rank(
        tmp_path, 0, "rank0", {"Torch.add.0.forward": call([tensor(NAN, NAN)], [tensor(NAN, NAN)])}
    )
    write_rank(tmp_path, 0, "rank1", {
        "Functional.linear.0.forward": FINE,
        "Torch.div.0.forward": call([tensor()], [tensor(-INF, INF)]),
    })  # fmt: skip
    write_rank(tmp_path, 0, "rank10", {"Functional.linear.0.forward": FINE})
    first = scan(tmp_path).first
    assert first is not None
    assert (first.rank, first.api, first.origin) == ("rank1", "Torch.div.0.forward", True)


def test_nan_in_the_loss_only_says_which_step_to_dump(tmp_path: Path) -> None:
    write_rank(tmp_path, 0, "rank0", {"Functional.linear.0.forward": FINE})
    write_rank(tmp_path, 1, "rank0", {"Functional.linear.0.forward": FINE})
    (tmp_path / "loss-rank0.jsonl").write_text(
        "".join(json.dumps({"step": s, "loss": v}) + "\n" for s, v in enumerate([2, 1, 0.5, NAN]))
        + '{"step": 4, "lo',  # a line cut short by a kill
        encoding="utf-8",
    )
    (tmp_path / "loss-rank1.jsonl").write_text('{"step": 5, "loss": Infinity}\n', encoding="utf-8")
    lines = scan(tmp_path).lines()
    assert lines == [
        "first NaN/Inf: NaN loss at step 3 (rank0)",
        "  the dump holds steps 0, 1: dump step 3 to see the API (--set 'precision.steps=[3]')",
    ]


def test_a_tensor_entry_without_statistics_is_read_from_its_saved_file(tmp_path: Path) -> None:
    entry = {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [3], "data_name": "x.npy"}
    rank_dir = write_rank(tmp_path, 0, "rank0", {
        "Functional.linear.0.forward": call([tensor()], [entry]),
    }, task="tensor")  # fmt: skip
    (rank_dir / "dump_tensor_data").mkdir()
    np.save(rank_dir / "dump_tensor_data" / "x.npy", np.array([1.0, np.inf, 2.0], np.float32))
    first = scan(tmp_path).first
    assert first is not None and (first.api, first.value, first.origin) == (
        "Functional.linear.0.forward", "inf", True,
    )  # fmt: skip


def test_a_dump_without_nan_says_nothing(tmp_path: Path) -> None:
    write_rank(tmp_path, 0, "rank0", {"Functional.linear.0.forward": FINE})
    (tmp_path / "loss-rank0.jsonl").write_text('{"step": 0, "loss": 1.5}\n', encoding="utf-8")
    result = scan(tmp_path)
    assert result.first is None and result.lines() == []
    assert compare_problems(result, scan(tmp_path)) == []


@pytest.mark.parametrize(
    ("content", "why"),
    [('{"task": "statistics", "data": {"Functional.li', "not a whole dump"),
     ("[1, 2]", "not a whole dump"), (None, "missing")],
)  # fmt: skip
def test_a_dump_cut_short_by_a_kill_is_said_once_and_fails_a_compare(
    tmp_path: Path, content: str | None, why: str
) -> None:
    write_rank(tmp_path, 0, "rank0", {"Functional.linear.0.forward": FINE})
    broken = tmp_path / "step1" / "rank0"
    broken.mkdir(parents=True)
    if content is not None:
        (broken / "dump.json").write_text(content, encoding="utf-8")
    result = scan(tmp_path)
    assert result.lines() == [f"cut short: step 1 rank0: dump.json is {why} (a killed run?)"]
    clean = tmp_path / "clean"
    write_rank(clean, 0, "rank0", {"Functional.linear.0.forward": FINE})
    assert compare_problems(scan(clean), result) == [
        f"B's dump is cut short (step 1 rank0: dump.json is {why} (a killed run?)): "
        "not every step was checked"
    ]


def _nan_dump(root: Path, step: int, api: str, rank: str = "rank0") -> Path:
    write_rank(root, step, rank, {api: call([tensor()], [tensor(NAN, NAN)])})
    return root


def test_compare_says_which_side_has_nan_and_never_calls_nan_on_both_sides_a_match(
    tmp_path: Path,
) -> None:
    clean = tmp_path / "clean"
    write_rank(clean, 1, "rank0", {"Torch.log.0.forward": FINE})
    a = scan(_nan_dump(tmp_path / "a", 1, "Torch.log.0.forward", "proc11"))
    b = scan(_nan_dump(tmp_path / "b", 1, "Torch.log.0.forward", "proc42"))
    c = scan(_nan_dump(tmp_path / "c", 1, "Torch.exp.0.forward"))
    (only_b,) = compare_problems(scan(clean), b)
    assert only_b.startswith(
        "NaN/Inf in B only (A has none): NaN in Torch.log.0.forward output at step 1"
    )
    (only_a,) = compare_problems(a, scan(clean))
    assert only_a.startswith("NaN/Inf in A only (B has none)")
    (same,) = compare_problems(a, b)  # proc<PID> dirs pair whatever their PIDs
    assert same.startswith("both runs diverge at the same first API, NaN/Inf in A and in B")
    assert "Torch.log.0.forward output at step 1" in same
    (different,) = compare_problems(a, c)
    assert different.startswith("NaN/Inf in both runs, first in A; A: NaN in Torch.log.0.forward")
    assert "B: NaN in Torch.exp.0.forward" in different


def test_the_run_summary_names_the_first_nan(tmp_path: Path) -> None:
    dump = _nan_dump(tmp_path / "precision-dump", 1, "Torch.log.0.forward")
    write_rank(dump, 0, "rank0", {"Functional.linear.0.forward": FINE})
    lines = dump_summary(dump, "RUN")
    assert any(
        line.startswith("  first NaN/Inf: NaN in Torch.log.0.forward output at step 1, rank0")
        for line in lines
    )
    assert lines[-1] == "  compare it with another dump run: majob compare RUN OTHER_RUN"


def test_msprobes_analysis_follows_nan_through_a_collective_to_the_rank_that_made_it(
    tmp_path: Path,
) -> None:
    pytest.importorskip("msprobe", reason="mindstudio-probe is not installed (majob[precision])")
    # rank0's all_reduce has finite inputs and NaN outputs: by the rule alone rank0 would be the
    # origin; msprobe sees that rank1 made the NaN before the collective, and names rank1.
    reduce = "Distributed.all_reduce.0.forward"
    write_rank(tmp_path, 0, "rank0", {
        "Functional.linear.0.forward": FINE,
        reduce: call([tensor()], [tensor(NAN, NAN)]),
    })  # fmt: skip
    write_rank(tmp_path, 0, "rank1", {
        "Functional.linear.0.forward": FINE,
        "Torch.div.0.forward": call([tensor()], [tensor(NAN, NAN)]),
        reduce: call([tensor(NAN, NAN)], [tensor(NAN, NAN)]),
    })  # fmt: skip
    first = scan(tmp_path).first
    assert first is not None
    assert (first.rank, first.api, first.found_by) == (
        "rank1", "Torch.div.0.forward", "msprobe overflow_check",
    )  # fmt: skip


def test_the_report_page_names_the_first_nan_and_leaves_out_the_nan_rows_after_it(
    tmp_path: Path,
) -> None:
    from majob.precision.compare import ApiRow, CompareReport, PairResult, to_json
    from majob.precision.html import render

    clean = tmp_path / "clean"
    write_rank(clean, 1, "rank0", {"Torch.log.0.forward": FINE})
    report = CompareReport("A", "B")
    report.nonfinite = (scan(clean), scan(_nan_dump(tmp_path / "b", 1, "Torch.log.0.forward")))
    rows = tuple(
        ApiRow(1, "rank0", f"{api}.output.0", api, "error", diff, "", "")
        for api, diff in (("Tensor.__add__.0.forward", "0.5"), ("Torch.log.0.forward", "nan"))
    )
    report.pairs.append(PairResult(1, "rank0", {"error": 2}, 2, 2, rows[0], rows, tmp_path))
    page = render(report)
    section = page.split('id="first-nonfinite">', 1)[1].split("</p>", 1)[0]
    assert "<b>A</b>: no NaN/Inf" in section
    assert "<b>B</b>: first NaN/Inf: NaN in Torch.log.0.forward output at step 1" in section
    worst = page.split('id="worst-apis"', 1)[1].split("</table>", 1)[0]
    assert (
        "Tensor.__add__.0.forward.output.0" in worst and "Torch.log.0.forward.output" not in worst
    )
    assert report.verdict == "fail"
    assert to_json(report)["nonfinite"]["target"]["first"]["api"] == "Torch.log.0.forward"  # type: ignore[index]
