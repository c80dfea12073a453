"""A seeded corpus of planted differences for ``majob compare`` (bench/precision.py --only corpus
and tests/e2e/precision/test_corpus.py).

One tiny script (``train.py``: an MLP on seeded data, four optimizer steps, each dumped); the
reference runs its defaults, each planted run changes one flag. Every run is a real
``majob run SPEC --dump`` (statistics, L1); each case compares its reference with its planted
run (in this process, as ``majob compare --format json`` does) and checks that the report names
the planted step and the line or API: a changed lr, a loss scale never undone, one Linear in
bfloat16, NaN at step 2 (in B only, and in both runs), NaN in the data from step 0, and an
identical pair that must report no difference.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SOURCE = (HERE / "train.py").read_text(encoding="utf-8").splitlines()
NAN_STEP = 2


def line_of(text: str) -> int:
    """The line of ``train.py`` holding ``text`` (1-based): where compare must point."""
    return next(i for i, line in enumerate(SOURCE, 1) if text in line)


SPEC = """\
name: precision-corpus
code: {{dir: {code}, boot_file: train.py, obs: "obs://corpus/code/"}}
image: {{engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}}
resources: {{flavor: modelarts.vm.cpu.8u}}
outputs: [{{name: train_url, obs: "obs://corpus/out/"}}]
precision: {{task: statistics, level: L1, steps: [0, 1, 2, 3], seed: 7}}
"""

Report = dict[str, Any]


def _api(report: Report) -> str:
    first = report.get("first_bad_api")
    if not first:
        return "no API differs"
    return f"step {first['step']} {first['api']} at {first['where'] or '?'}"


def _nan(report: Report, side: str = "target") -> str:
    scanned = (report.get("nonfinite") or {}).get(side) or {}
    first = scanned.get("first")
    if not first:
        return "no NaN/Inf"
    kind = " (origin)" if first["origin"] else ""
    return f"step {first['step']} {first['api']} {first['side']}{kind}"


def _at_line(line: int) -> Callable[[Report], tuple[str, bool]]:
    """The first API not passing is at step 0, in a call on ``train.py``'s ``line``."""

    def check(report: Report) -> tuple[str, bool]:
        first = report.get("first_bad_api") or {}
        at_line = re.search(rf"train\.py:{line} in ", str(first.get("where", "")))
        return _api(report), report["verdict"] == "fail" and first.get("step") == 0 and bool(
            at_line
        )

    return check


def _nan_origin(report: Report) -> tuple[str, bool]:
    found = _nan(report)
    first = report["nonfinite"]["target"]["first"] or {}
    ok = (
        report["verdict"] == "fail"
        and report["nonfinite"]["golden"]["first"] is None
        and first.get("step") == NAN_STEP
        and str(first.get("api", "")).startswith("Torch.log.")
        and first.get("origin") is True
    )
    return found, ok


def _nan_both(report: Report) -> tuple[str, bool]:
    same = [p for p in report["problems"] if p.startswith("both runs diverge at the same")]
    first = report["nonfinite"]["golden"]["first"] or {}
    found = (
        f"{_nan(report)} in A and B" if same else f"A: {_nan(report, 'golden')}; B: {_nan(report)}"
    )
    ok = (
        report["verdict"] == "fail"
        and bool(same)
        and first.get("step") == NAN_STEP
        and str(first.get("api", "")).startswith("Torch.log.")
    )
    return found, ok


def _nan_from_start(report: Report) -> tuple[str, bool]:
    first = report["nonfinite"]["target"]["first"] or {}
    ok = (
        report["verdict"] == "fail"
        and first.get("step") == 0
        and first.get("api") == "Functional.linear.0.forward"  # the model's first API
        and first.get("side") == "input"
    )
    return _nan(report), ok


def _identical(report: Report) -> tuple[str, bool]:
    found = "no difference" if not report["problems"] else "; ".join(report["problems"])
    return found, report["verdict"] == "pass" and not report["problems"]


@dataclass(frozen=True)
class Case:
    name: str
    golden: tuple[str, ...]  # the reference run's --set overrides (a run key)
    target: tuple[str, ...]
    expected: str
    check: Callable[[Report], tuple[str, bool]]


def _hp(name: str, value: object) -> str:
    return f"hyperparameters.{name}={value}"


SCALED, FC2 = line_of("(loss * args.loss_scale)"), line_of("self.fc2(h.to(")
STEP = line_of("optimizer.step()")
REFERENCE: tuple[str, ...] = ()
NAN = (_hp("nan_step", NAN_STEP),)
CASES = (
    Case("identical", REFERENCE, ("again",), "no difference", _identical),
    Case("lr 0.1 -> 0.2", REFERENCE, (_hp("lr", 0.2),), f"step 0 at train.py:{STEP}",
         _at_line(STEP)),
    Case("loss scale x1024", REFERENCE, (_hp("loss_scale", 1024),),
         f"step 0 at train.py:{SCALED}", _at_line(SCALED)),
    Case("fc2 in bfloat16", REFERENCE, (_hp("fc2_dtype", "bfloat16"),),
         f"step 0 Functional.linear.1.forward at train.py:{FC2}", _at_line(FC2)),
    Case(f"NaN at step {NAN_STEP}", REFERENCE, NAN,
         f"step {NAN_STEP} Torch.log.0.forward output (origin)", _nan_origin),
    Case(f"NaN at step {NAN_STEP}, both", NAN, (*NAN, "again"),
         f"step {NAN_STEP} Torch.log.0.forward output (origin) in A and B", _nan_both),
    Case("NaN data from step 0", REFERENCE, (_hp("nan_data", 1),),
         "step 0 Functional.linear.0.forward input", _nan_from_start),
)  # fmt: skip


@dataclass(frozen=True)
class Row:
    case: str
    expected: str
    found: str
    ok: bool


class Runner:
    """Makes each distinct run once (``majob run --dump``) under ``work`` and compares pairs."""

    def __init__(self, work: Path, majob: str) -> None:
        self.work, self.majob = work, majob
        self.runs = work / "runs"
        (work / "spec.yaml").write_text(SPEC.format(code=HERE), encoding="utf-8")
        self.made: dict[tuple[str, ...], Path] = {}

    def run(self, key: tuple[str, ...]) -> Path:
        if key not in self.made:
            sets = [a for s in key if s != "again" for a in ("--set", s)]
            command = [self.majob, "run", "spec.yaml", "--dump", "--runs-dir", str(self.runs)]
            done = subprocess.run(
                [*command, *sets], cwd=self.work, capture_output=True, text=True, check=False
            )
            found = re.search(r"^run (\S+): passed", done.stdout, re.MULTILINE)
            if done.returncode != 0 or found is None:
                raise RuntimeError(f"{' '.join(sets)}: {done.returncode}\n{done.stdout[-2000:]}")
            self.made[key] = self.runs / found.group(1)
        return self.made[key]

    def compare(self, golden: Path, target: Path) -> Report:
        from majob.precision.compare import compare_runs, to_json
        from majob.precision.sources import from_directory

        with tempfile.TemporaryDirectory(prefix="majob-corpus-") as scratch:
            report = compare_runs(
                from_directory(golden, "A"), from_directory(target, "B"), Path(scratch)
            )
            return to_json(report)


def run_corpus(work: Path, majob: str, cases: tuple[Case, ...] = CASES) -> list[Row]:
    runner = Runner(work, majob)
    rows = []
    for case in cases:
        report = runner.compare(runner.run(case.golden), runner.run(case.target))
        found, ok = case.check(report)
        rows.append(Row(case.name, case.expected, found, ok))
    return rows


def table(rows: list[Row]) -> str:
    widths = [max(len(getattr(r, f)) for r in rows) for f in ("case", "expected", "found")]
    widths = [max(w, len(h)) for w, h in zip(widths, ("case", "expected", "found"), strict=True)]
    head = ("case", "expected", "found", "ok")
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, [*widths, 2], strict=True))]
    for r in rows:
        cells = (r.case, r.expected, r.found, "ok" if r.ok else "MISSED")
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, [*widths, 2], strict=True)))
    return "\n".join(lines)
