"""``--dump grad``: the optional word after SPEC that says what a dump run records besides
msprobe's API dump. Typer cannot give ``--dump`` an optional value (``--dump SPEC`` would take
the spec as the value), so ``--dump`` stays a flag and ``grad`` is a second, optional argument:
``majob run SPEC --dump grad`` (``majob run --dump grad SPEC`` reads the same).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from majob.errors import UserInputError

if TYPE_CHECKING:
    from majob.spec.models import JobSpec, Stage

KINDS = ("grad",)
DumpWhatArgument = Annotated[
    str | None,
    typer.Argument(
        metavar="[grad]",
        help="With --dump: `grad` records the gradients too (per step and parameter: "
        "statistics and directions), as the spec's precision.grad says.",
        show_default=False,
    ),
]


def dump_kind(spec: Path, what: str | None, dump: bool, command: str) -> tuple[Path, bool]:
    """The spec file and whether gradients are recorded, from SPEC and the word after it."""
    if what is None:
        return spec, False
    if str(spec) in KINDS and what not in KINDS:  # `--dump grad SPEC`
        spec, what = Path(what), str(spec)
    if what not in KINDS:
        raise UserInputError(
            f"{what!r}: the word after SPEC says what --dump records, and the only one is grad",
            hint=f"majob {command} {spec} --dump grad",
        )
    if not dump:
        raise UserInputError(
            f"{what} without --dump: the gradients are recorded by a dump run",
            hint=f"majob {command} {spec} --dump {what}",
        )
    return spec, True


def with_grad(spec: JobSpec) -> JobSpec:
    """``spec`` with ``precision.grad`` set (its defaults when the spec has none)."""
    from majob.spec.precision_spec import GradProbe, Precision

    precision = spec.precision or Precision.model_validate({})
    if precision.grad is not None:
        return spec
    grad = precision.model_copy(update={"grad": GradProbe.model_validate({})})
    return spec.model_copy(update={"precision": grad})


def dump_line(spec: JobSpec, stage: Stage) -> str:
    """Where a dumped job's dump is (msprobe's messages went there too, not into the log)."""
    from majob.precision.dumpconfig import DUMP_DIR, dump_channel

    channel = dump_channel(spec)
    obs = spec.output_obs(stage, channel)
    return (
        f"[majob] precision dump: {obs}{DUMP_DIR}/ with the {channel} output (msprobe's messages "
        f"in its msprobe-rank<R>.log); a precision run, not recorded in the ledger; compare it: "
        f"majob compare OTHER_RUN {obs}"
    )
