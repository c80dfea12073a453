"""``--dump grad`` (issue 39 item 1) and deterministic mode (item 4): the spec, the recording on a
real small torch model in-process, the comparison, and every bad input."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from majob.errors import SpecError, UserInputError
from majob.precision.config_table import config_table
from majob.precision.dumpconfig import prepare
from majob.precision.gradcompare import compare_grads, read_grads
from majob.precision.gradhtml import heatmap
from majob.spec.digest import normalised_spec, spec_digest
from majob.spec.load import load_spec

torch = pytest.importorskip("torch")
pytest.importorskip("numpy")

from majob.precision.gradprobe import GradRecorder, bucket_headers, plain_name  # noqa: E402
from tests.unit.precision.conftest import spec_file  # noqa: E402

BOUNDS = [-0.01, 0.0, 0.01]


def problems(path: Path) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    return [f"{p.line}:{p.col} {p.path}: {p.message}" for p in caught.value.problems]


# -- the spec ---------------------------------------------------------------------------------


def test_every_grad_key_is_optional_and_steps_default_to_the_dumps(tmp_path: Path) -> None:
    spec = load_spec(spec_file(tmp_path, "precision: {steps: [3, 4], grad: {}}\n"))
    assert spec.precision is not None and spec.precision.grad is not None
    assert spec.precision.grad_steps == (3, 4) and spec.precision.grad.layers == ()
    assert not spec.precision.deterministic
    env = prepare(spec, tmp_path / "out", tmp_path / "config")
    settings = json.loads(Path(env["MAJOB_PRECISION"]).read_text())
    assert settings["grad"]["steps"] == [3, 4] and settings["deterministic"] is False
    assert settings["grad"]["bounds"] == sorted(settings["grad"]["bounds"])


def test_bad_grad_settings_are_refused_where_they_were_written(tmp_path: Path) -> None:
    text = "precision:\n  grad:\n    bounds: [0, 1, 1]\n    layers: ['']\n    step: [0]\n"
    found = problems(spec_file(tmp_path, text))
    assert any(
        line.startswith("8:13 precision.grad.bounds") and "strictly increasing" in line
        for line in found
    ), found
    assert any(line.startswith("9:14 precision.grad.layers[0]") for line in found), found
    assert any("precision.grad.step" in line and "unknown key" in line for line in found), found
    text = "precision: {deterministic: maybe}\n"
    assert any("precision.deterministic" in line for line in problems(spec_file(tmp_path, text)))


def test_the_digest_of_a_spec_without_the_new_keys_does_not_change(tmp_path: Path) -> None:
    plain = load_spec(spec_file(tmp_path, "precision: {steps: [0]}\n"))
    assert set(normalised_spec(plain)["precision"]) == {
        "task", "level", "steps", "ranks", "scope", "seed"
    }  # fmt: skip
    graded = load_spec(spec_file(tmp_path, "precision: {steps: [0], grad: {layers: [fc1]}}\n"))
    assert spec_digest(graded) == spec_digest(plain)  # what is recorded changes no training
    fixed = load_spec(spec_file(tmp_path, "precision: {steps: [0], deterministic: true}\n"))
    assert spec_digest(fixed) != spec_digest(plain)  # dropout off does


# -- the recording ----------------------------------------------------------------------------


class Net(torch.nn.Module):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(12, 16)
        self.fc2 = torch.nn.Linear(16, 3)

    def forward(self, x: Any) -> Any:
        return self.fc2(torch.relu(self.fc1(x)))


class Wrapped(torch.nn.Module):  # type: ignore[misc]
    def __init__(self, module: Any) -> None:
        super().__init__()
        self.module = module


Plant = Callable[[int, Any], None]


def recorded_model(dump: Path) -> dict[str, Any]:
    """The parameters of ``train``'s model after its last recorded backward (step 1)."""
    seen: dict[str, Any] = {}

    def keep(step: int, model: Any) -> None:
        if step == 1:
            seen.update({n: p for n, p in model.named_parameters()})

    train(dump, plant=keep)
    return seen


def train(
    dump: Path, steps: int = 2, plant: Plant | None = None, layers: list[str] | None = None
) -> Path:
    """Two steps of a seeded model, recorded as the bootstrap does (after each backward)."""
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    recorder = GradRecorder(
        {"steps": list(range(steps)), "layers": layers or [], "bounds": BOUNDS}, str(dump), "0"
    )
    recorder.watch(Wrapped(model))  # as DDP wraps it: names without the "module." prefix
    data = torch.randn(8, 12, generator=torch.Generator().manual_seed(1))
    target = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    for step in range(steps):
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(data), target).backward()
        if plant is not None:
            plant(step, model)
        recorder.record(step)
        optimizer.step()
    return dump


def test_each_step_has_grad_probes_columns_and_the_signs(tmp_path: Path) -> None:
    dump = train(tmp_path / "a")
    rank = dump / "grad" / "rank0"
    header = (rank / "grad_summary_0.csv").read_text().splitlines()[0].split(",")
    assert header[0] == "param_name" and header[-5:] == ["max", "min", "norm", "shape", "mean"]
    grads = read_grads(dump, "A")
    assert grads is not None
    rows = grads["rank0"].steps[1]
    assert [r.name for r in rows] == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert rows[0].shape == (16, 12) and rows[0].norm > 0 and rows[0].min <= rows[0].mean
    import numpy

    signs = numpy.unpackbits(numpy.load(rank / "signs_1.npy"), bitorder="little")
    grad = {name: param.grad for name, param in recorded_model(tmp_path / "again").items()}
    expected = numpy.concatenate([(grad[r.name] > 0).numpy().reshape(-1) for r in rows])
    assert (signs[: expected.size] == expected).all()  # in the rows' order
    # the bucket shares of a row add up to one (the =0 share is counted in its bucket too)
    line = (rank / "grad_summary_1.csv").read_text().splitlines()[1].split(",")
    shares = [float(v) for v in line[1 : 1 + len(BOUNDS) + 1]]
    assert math.isclose(sum(shares), 1.0, rel_tol=1e-4)
    assert bucket_headers(BOUNDS)[0] == "(-inf, -0.01]" and bucket_headers(BOUNDS)[-1] == "=0"


def test_the_statistics_are_each_parameters_own_and_large_values_keep_a_finite_norm() -> None:
    import numpy

    from majob.precision.gradprobe import _statistics

    small = numpy.array([-0.5, 0.0, 0.0, 0.005, 2.0], dtype=numpy.float32)
    huge = numpy.full(1000, 1e20, dtype=numpy.float32)  # its squares overflow float32
    empty = numpy.zeros(0, dtype=numpy.float32)
    rows = _statistics(numpy, numpy.concatenate([small, empty, huge]), [5, 0, 1000], BOUNDS)
    first, nothing, big = rows
    # (-inf, -0.01], (-0.01, 0], (0, 0.01], (0.01, inf), then =0
    assert first[:5] == [0.2, 0.4, 0.2, 0.2, 0.4]
    assert first[5:] == pytest.approx([2.0, -0.5, math.sqrt(0.25 + 0.005**2 + 4), 0.301], rel=1e-6)
    assert all(math.isnan(v) for v in nothing)
    assert big[-2] == pytest.approx(1e20 * math.sqrt(1000), rel=1e-6) and big[-1] > 0


def test_layer_patterns_pick_parameters_and_wrappers_are_left_out(tmp_path: Path) -> None:
    grads = read_grads(train(tmp_path / "a", layers=["fc2"]), "A")
    assert grads is not None
    assert [r.name for r in grads["rank0"].steps[0]] == ["fc2.weight", "fc2.bias"]
    grads = read_grads(train(tmp_path / "b", layers=["*.bias"]), "A")
    assert grads is not None
    assert [r.name for r in grads["rank0"].steps[0]] == ["fc1.bias", "fc2.bias"]
    assert plain_name("module._orig_mod.fc1.weight") == "fc1.weight"


# -- the comparison ---------------------------------------------------------------------------


def flip_fc2_at_step_1(step: int, model: Any) -> None:
    if step == 1:
        model.fc2.weight.grad[:2] *= -1  # two of three rows' directions reversed


def test_a_planted_difference_is_found_at_its_layer_and_step(tmp_path: Path) -> None:
    a = train(tmp_path / "a")
    b = train(tmp_path / "b", plant=flip_fc2_at_step_1)
    result = compare_grads(a, b)
    assert result is not None
    assert result.first_diverging == (1, ("fc2.weight",))
    assert result.cells[("fc2.weight", 1)].cosine < 0  # most signs reversed
    assert all(c.cosine == 1.0 for c in result.cells.values() if c.layer != "fc2.weight")
    assert result.problems[0].startswith("gradient directions part at step 1: fc2.weight")
    page = heatmap(result)
    assert page.count('class="first-diverging"') == 1 and 'data-step="1"' in page
    assert result.to_json()["first_diverging"] == {"step": 1, "layers": ["fc2.weight"]}


def test_identical_runs_report_no_difference(tmp_path: Path) -> None:
    result = compare_grads(train(tmp_path / "a"), train(tmp_path / "b"))
    assert result is not None
    assert result.problems == [] and result.first_diverging is None
    assert "the same directions and norms" in result.summary_lines()[1]


def test_a_scaled_loss_keeps_directions_and_is_found_by_its_norms(tmp_path: Path) -> None:
    def double(step: int, model: Any) -> None:
        for param in model.parameters():
            param.grad *= 2

    # one step: the doubled step-0 gradients would make a different step 1
    result = compare_grads(train(tmp_path / "a", 1), train(tmp_path / "b", 1, plant=double))
    assert result is not None and result.first_diverging is None
    norm = result.first_norm
    assert norm is not None and (norm.step, norm.layer) == (0, "fc1.weight")


def test_no_gradients_on_either_side_is_no_gradient_section(tmp_path: Path) -> None:
    assert compare_grads(tmp_path, tmp_path) is None


# -- bad input: one clear message each, never a "match" --------------------------------------


def refused(a: Path, b: Path) -> str:
    with pytest.raises(UserInputError) as caught:
        compare_grads(a, b)
    return str(caught.value)


def test_one_side_without_gradients(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    message = refused(train(tmp_path / "a"), tmp_path / "plain")
    assert message.startswith("A has gradients (--dump grad) and B has none")


def test_different_models(tmp_path: Path) -> None:
    message = refused(train(tmp_path / "a"), train(tmp_path / "b", layers=["fc2"]))
    assert "do not train the same model: parameter fc1.weight" in message
    b = train(tmp_path / "c")
    summary = b / "grad" / "rank0" / "grad_summary_0.csv"
    summary.write_text(summary.read_text().replace('"[16, 12]"', '"[12, 16]"'))
    assert "fc1.weight is [16, 12] in A, [12, 16] in B" in refused(train(tmp_path / "d"), b)


def test_different_step_ranges(tmp_path: Path) -> None:
    message = refused(train(tmp_path / "a", steps=3), train(tmp_path / "b", steps=2))
    assert "different steps (rank0): A 0, 1, 2, B 0, 1 (B stopped early" in message


def test_a_dump_cut_short_by_a_kill(tmp_path: Path) -> None:
    b = train(tmp_path / "b")
    summary = b / "grad" / "rank0" / "grad_summary_1.csv"
    summary.write_text(summary.read_text()[:-40])  # the last line cut in the middle
    message = refused(train(tmp_path / "a"), b)
    assert message.startswith("B: its gradient dump is cut short (rank0/grad_summary_1.csv line 5")
    summary.unlink()  # killed before the step's summary: its direction file is there alone
    assert "rank0/signs_1.npy has no grad_summary_1.csv" in refused(train(tmp_path / "c"), b)
    d = train(tmp_path / "d")
    signs = d / "grad" / "rank0" / "signs_1.npy"
    signs.write_bytes(signs.read_bytes()[:-20])
    assert "rank0/signs_1.npy is missing or cut short" in refused(train(tmp_path / "e"), d)


def test_nan_gradients_from_step_0(tmp_path: Path) -> None:
    def nan(step: int, model: Any) -> None:
        model.fc1.weight.grad[0, 0] = math.nan

    message = refused(train(tmp_path / "a"), train(tmp_path / "b", plant=nan))
    assert message.startswith("B's gradients are NaN/Inf from its first recorded step 0")
    assert "fc1.weight" in message


def test_nan_later_is_a_parted_direction_not_a_match(tmp_path: Path) -> None:
    def nan(step: int, model: Any) -> None:
        if step == 1:
            model.fc2.bias.grad[0] = math.inf

    result = compare_grads(train(tmp_path / "a"), train(tmp_path / "b", plant=nan))
    assert result is not None and result.first_diverging == (1, ("fc2.bias",))
    assert "NaN/Inf" in result.problems[0]


def test_a_non_finite_gradient_is_a_first_nan_source_named_nearest_the_loss(tmp_path: Path) -> None:
    from majob.precision.nonfinite import scan

    def inf(step: int, model: Any) -> None:
        if step == 1:  # as backward would leave it: fc1 after the bad op, fc2 before it
            model.fc1.weight.grad[0, 0] = math.inf
            model.fc1.bias.grad[0] = math.nan

    found = scan(train(tmp_path / "a", plant=inf))
    first = found.first
    assert first is not None and (first.source, first.step, first.api) == ("grad", 1, "fc1.bias")
    assert "2 of 4 parameters' gradients are not finite" in first.describe()
    assert found.to_json()["by_source"] == {"grad": found.to_json()["first"]}
    assert scan(train(tmp_path / "b")).first is None


# -- deterministic mode -----------------------------------------------------------------------


def test_compare_warns_when_only_one_side_ran_deterministic(tmp_path: Path) -> None:
    dumps = []
    for name, extra in (("a", ""), ("b", "precision: {deterministic: true}\n")):
        (tmp_path / name).mkdir()
        dumps.append(tmp_path / name / "out")
        prepare(load_spec(spec_file(tmp_path / name, extra)), dumps[-1], tmp_path / name / "cfg")
    table = config_table((dumps[0] / "precision-dump", dumps[1] / "precision-dump"), (None, None))
    row = next(r for r in table.rows if r.what == "precision.deterministic")
    assert (row.a, row.b) == ("no", "yes")
    assert any(w.startswith("only B ran in deterministic mode") for w in table.warnings)
    same = config_table((dumps[1] / "precision-dump",) * 2, (None, None))
    assert not any("deterministic mode" in w for w in same.warnings)


def test_deterministic_mode_seeds_with_msprobes_rm_dropout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("msprobe", reason="mindstudio-probe is not installed (majob[precision])")
    from majob.precision import bootstrap

    functional = torch.nn.functional
    for name, value in vars(functional).items():  # seed_all patches these: put them back after
        if "dropout" in name:
            monkeypatch.setattr(functional, name, value)
    monkeypatch.setattr(torch, "use_deterministic_algorithms", lambda *a, **k: None)
    config = {"seed": 3, "deterministic": True, "dump_path": str(tmp_path), "step": [0]}
    bootstrap._State(config).seed()
    ones = torch.ones(1000)
    assert torch.equal(torch.nn.Dropout(0.5).train()(ones), ones)  # p set to 0
    assert torch.equal(functional.dropout(ones, 0.5, training=True), ones)


# -- the command line -------------------------------------------------------------------------


def test_the_word_after_spec_goes_with_dump(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from majob.cli.app import app

    spec = spec_file(tmp_path)
    runner = CliRunner()
    alone = runner.invoke(app, ["run", str(spec), "grad"])
    assert alone.exit_code == 2 and "grad without --dump" in alone.output
    other = runner.invoke(app, ["submit", str(spec), "grads", "--dump", "--dry-run"])
    assert other.exit_code == 2 and "the only one is grad" in other.output
    from majob.cli.dumpkind import dump_kind, with_grad

    assert dump_kind(Path("grad"), str(spec), True, "run") == (spec, True)  # --dump grad SPEC
    assert dump_kind(spec, None, True, "run") == (spec, False)
    graded = with_grad(load_spec(spec))
    assert graded.precision is not None and graded.precision.grad is not None
    kept = load_spec(spec_file(tmp_path, "precision: {grad: {layers: [fc1]}}\n"))
    assert with_grad(kept) is kept  # the spec's own settings are what --dump grad records
