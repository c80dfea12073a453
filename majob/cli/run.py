"""``majob run``: run a spec's stage. The local stage runs here, in an emulated container."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from majob.cli.common import (
    ProfileOption,
    SetOption,
    SpecFileArgument,
    sigterm_as_ctrl_c,
    user_errors,
    warn_about_sets,
)
from majob.cli.dumpkind import DumpWhatArgument, dump_kind, with_grad
from majob.errors import ConfigError, UserInputError

if TYPE_CHECKING:
    from majob.runner.result import RunResult
    from majob.spec.models import JobSpec

commands = typer.Typer()
"""This module's commands; ``majob.cli.app`` adds them to ``majob``."""

STAGES = ("local", "debug", "formal")


def _parse_inputs(pairs: list[str]) -> dict[str, str]:
    inputs: dict[str, str] = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise ConfigError(f"--input {pair!r}: write NAME=PATH, e.g. --input data_url=./data")
        inputs[name] = path
    return inputs


def _parse_timeout(text: str | None) -> int | None:
    if text is None:
        return None
    from majob.spec.durations import parse_duration

    try:
        return parse_duration(text)
    except ValueError as error:
        raise ConfigError(f"--timeout {text!r}: {error}") from None


def _summary(
    result: RunResult,
    dump: bool = False,
    perf: bool = False,
    spec: tuple[JobSpec, Path] | None = None,
) -> list[str]:
    """What ``majob run`` says at its end (``spec``: the spec run and its file)."""
    from majob.perf.setup import PROFILING_DIR
    from majob.precision.dumpconfig import DUMP_DIR
    from majob.text import counted

    lines = [
        f"run {result.run_id}: {result.status} in {result.duration:.1f}s "
        f"({counted(len(result.nodes), 'node')}); record: {result.record}"
    ]
    copies = {copy.channel: copy for copy in result.copies}
    # said once, below, not file by file
    dumped = f"{DUMP_DIR}/" if dump else f"{PROFILING_DIR}/" if perf else None
    for output in result.outputs:
        if dumped and output.path.startswith(dumped):
            continue
        copy = copies.get(output.channel)
        size = counted(output.size, "byte")
        if copy is not None and output.path in copy.copied:
            where = f"-> {copy.target / output.path}"
            if output.path in copy.replaced:
                where += " (replaced the file that was there)"
        else:
            where = f"in {result.output_dir(output.channel) / output.path}"
            if copy is not None and output.path in copy.kept:
                where += f" (not copied: {copy.target / output.path} differs and was kept)"
        lines.append(f"  output {output.channel}: {output.path} ({size}) {where}")
    replaced = sum(len(copy.replaced) for copy in result.copies)
    if replaced:
        lines.append(f"replaced {counted(replaced, 'existing output file')} (--overwrite)")
    kept = sum(len(copy.kept) for copy in result.copies)
    if kept:
        lines.append(
            f"kept {counted(kept, 'existing output file')} this run would have changed "
            "(--overwrite replaces); this run's files are in its run directory"
        )
    if dump and result.output_dirs:  # the dump is in the first output channel
        from majob.precision.dumped import dump_summary

        first = next(iter(result.output_dirs.values()))
        lines += dump_summary(first / DUMP_DIR, result.run_id)
    from majob.cli.run_perf import step_lines

    lines += step_lines(result, spec if perf else None)
    if result.pruned:
        lines.append(
            f"removed {counted(len(result.pruned), 'old run')} from {result.run_dir.parent} "
            "(retention: MAJOB_RUNS_KEEP, MAJOB_RUNS_MAX_AGE; see `majob runs --help`)"
        )
    if result.findings:
        lines.append(
            f"guard: {counted(len(result.findings), 'finding')} (--strict makes them fail the run)"
        )
        lines += [f"  {finding.describe()}" for finding in result.findings]
    return lines


# The options of `majob run`, spelled here so that the command reads as what it does.
StageOption = Annotated[str, typer.Option("--stage", help="local (this machine), debug or formal.")]
NodesOption = Annotated[
    int | None, typer.Option("--nodes", min=1, help="Override the stage's node count.")
]
InputOption = Annotated[
    list[str] | None,
    typer.Option("--input", help="NAME=PATH: local data for an input. Repeatable."),
]
PythonOption = Annotated[
    str | None,
    typer.Option(
        "--python",
        envvar="MAJOB_PYTHON",
        help="Interpreter the nodes run, e.g. a project venv (default: majob's own).",
    ),
]
StrictOption = Annotated[
    bool, typer.Option("--strict", help="Fail when the guard finds writes/reads to fix.")
]
TimeoutOption = Annotated[
    str | None, typer.Option("--timeout", help="Stop the run after this long, e.g. 90s, 10m.")
]
OverwriteOption = Annotated[
    bool,
    typer.Option(
        "--overwrite",
        help="Let a passed run replace files that differ in an output's local path "
        "(default: keep them; the run's files stay in its run directory).",
    ),
]
RunsDirOption = Annotated[
    Path | None,
    typer.Option("--runs-dir", help="Where run records go (default: ./.majob/runs)."),
]
AllowSecretsOption = Annotated[
    bool,
    typer.Option(
        "--allow-secrets",
        help="Copy files that look like secrets (.env, id_rsa*, *.pem...) with the code.",
    ),
]
DumpOption = Annotated[
    bool,
    typer.Option(
        "--dump",
        help="Dump with msprobe as the spec's `precision:` says (for `majob compare`); "
        "needs majob[precision].",
    ),
]
PerfOption = Annotated[
    bool,
    typer.Option(
        "--perf",
        help="Profile the steps the spec's `perf:` names (torch.profiler) into the first "
        "output's profiling/ folder; read it with `majob perf DIR`.",
    ),
]
FailAtOption = Annotated[
    str | None,
    typer.Option(
        "--fail-at",
        help="Rehearse a failure: kill the run at a time (30s), at the N-th point of a metric "
        "(step:40 counts the progress metric, loss:12 names one) or a share (50%), restart it "
        "as ModelArts would and say whether it resumed.",
    ),
]
NodeOption = Annotated[
    int | None,
    typer.Option("--node", min=0, help="With --fail-at: kill only this node (default: all)."),
]
CompareToOption = Annotated[
    Path | None,
    typer.Option(
        "--compare-to",
        help="With --fail-at: a passed local run (id or dir) as the uninterrupted reference, "
        "instead of running it again.",
    ),
]
ExpectResumeOption = Annotated[
    bool,
    typer.Option(
        "--expect-resume", help="With --fail-at: exit 1 unless the restarted run resumed."
    ),
]
CacheSizeOption = Annotated[
    str | None,
    typer.Option(
        "--cache-size",
        help="Each node's /cache (e.g. 10MB) over the flavor's disk; a run past it fails.",
    ),
]
ToleranceOption = Annotated[
    float,
    typer.Option(
        "--tolerance",
        min=0.0,
        help="With --fail-at: how far (relative) the final metrics may be from the "
        "uninterrupted run's.",
    ),
]


@commands.command()
@user_errors
def run(
    spec: SpecFileArgument,
    what: DumpWhatArgument = None,
    stage: StageOption = "local",
    nodes: NodesOption = None,
    set_: SetOption = None,
    input_: InputOption = None,
    python: PythonOption = None,
    strict: StrictOption = False,
    timeout: TimeoutOption = None,
    overwrite: OverwriteOption = False,
    runs_dir: RunsDirOption = None,
    profile: ProfileOption = None,
    allow_secrets: AllowSecretsOption = False,
    dump: DumpOption = False,
    perf: PerfOption = False,
    fail_at: FailAtOption = None,
    node: NodeOption = None,
    compare_to: CompareToOption = None,
    expect_resume: ExpectResumeOption = False,
    tolerance: ToleranceOption = 0.05,
    cache_size: CacheSizeOption = None,
) -> None:
    """Run a stage of SPEC. `--stage local` runs the nodes here, as in the training container."""
    (spec, grad), rehearsal = dump_kind(spec, what, dump, "run"), fail_at is not None
    _check_options(stage, rehearsal, node, compare_to, expect_resume, dump, cache_size)
    _check_perf_options(perf, dump, rehearsal, stage, spec)
    if stage != "local":
        _run_in_cloud(spec, stage, nodes, set_ or [], profile, dump)
        return
    from majob.runner.local import run_local

    job = _local_spec(spec, set_, input_, profile, dump and python is None, perf, grad)
    limit = _parse_timeout(timeout)
    try:
        with sigterm_as_ctrl_c():
            if fail_at is not None:
                from majob.cli.rehearse import run_rehearsal
                from majob.pipeline.rehearsal import RehearsalOptions

                options = RehearsalOptions(nodes, python, limit, runs_dir, tolerance=tolerance)
                run_rehearsal(job, fail_at, node, compare_to, expect_resume, options)
                return
            result = run_local(
                job,
                "local",
                nodes=nodes,
                python=python,
                strict=strict,
                timeout=limit,
                runs_dir=runs_dir,
                overwrite=overwrite,
                allow_secrets=allow_secrets,
                **_node_setup(dump, perf, cache_size),
            )
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted; every node was stopped\n")
        raise typer.Exit(130) from None
    for line in _summary(result, dump, perf, (job, spec)):
        typer.echo(line)


def _parse_cache_size(text: str | None) -> int | None:
    if text is None:
        return None
    from majob.sizes import parse_size

    try:
        return parse_size(text)
    except UserInputError as error:
        raise UserInputError(f"--cache-size {text!r}: not a size", hint=error.hint) from None


def _node_setup(dump: bool, perf: bool, cache_size: str | None = None) -> dict[str, Any]:
    """``run_local``'s ``prepare_env`` and ``run_dir_only``: every run records its step
    times; ``--perf`` profiles, ``--dump`` dumps as well; each stays in the run directory.
    And its ``cache_size``, from ``--cache-size``."""
    from majob.perf.setup import PROFILING_DIR, for_local_run
    from majob.precision import dumpconfig

    kept = (dumpconfig.DUMP_DIR,) if dump else (PROFILING_DIR,) if perf else ()
    return {
        "prepare_env": for_local_run(perf, also=dumpconfig.for_local_run if dump else None),
        "run_dir_only": kept,
        "cache_size": _parse_cache_size(cache_size),
    }


def _check_perf_options(perf: bool, dump: bool, rehearsal: bool, stage: str, spec: Path) -> None:
    if not perf:
        return
    if dump:
        raise UserInputError(
            "--perf and --dump: profile and dump in separate runs "
            "(msprobe's hooks would be in the profile, and the profiler in the dump)"
        )
    if rehearsal:
        raise UserInputError("--fail-at and --perf: rehearse and profile in separate runs")
    if stage != "local":
        raise UserInputError(
            f"--perf with --stage {stage}: a cloud stage's profile is staged by submit",
            hint=f"run `majob submit {spec} --stage {stage} --perf --wait`",
        )


def _local_spec(
    spec: Path,
    overrides: list[str] | None,
    inputs: list[str] | None,
    profile: str | None,
    needs_msprobe: bool,
    perf: bool = False,
    grad: bool = False,
) -> JobSpec:
    """The spec as the local stage runs it, every check made before a node starts (or a run
    directory is made)."""
    from majob.spec.load import load_spec

    if needs_msprobe:  # the nodes run this interpreter with --dump: say it before the run
        from majob.precision.probe import require_msprobe

        require_msprobe()
    # An --input replaces the input's `local` before the spec's files are checked.
    job = load_spec(
        spec, overrides=overrides or (), profile=profile, local_inputs=_parse_inputs(inputs or [])
    )
    warn_about_sets(job, overrides, ["local"])
    job = with_grad(job) if grad else job  # --dump grad
    if perf:  # the profile needs an output channel to go to
        from majob.perf.setup import perf_channel

        perf_channel(job.at_stage("local"))
    return job


def _check_options(
    stage: str,
    rehearsal: bool,
    node: int | None,
    compare_to: Path | None,
    expect_resume: bool,
    dump: bool,
    cache_size: str | None,
) -> None:
    """A known stage; the rehearsal's options only with --fail-at, on the local stage;
    --cache-size only on the local stage, without --fail-at."""
    if stage not in STAGES:
        raise UserInputError(f"--stage {stage!r}: choose one of {', '.join(STAGES)}")
    if cache_size is not None and (stage != "local" or rehearsal):
        where = f"--stage {stage}" if stage != "local" else "--fail-at"
        raise UserInputError(f"--cache-size with {where}: it sets the local stage's /cache")
    given = [
        name
        for name, value in (("--node", node), ("--compare-to", compare_to))
        if value is not None
    ] + (["--expect-resume"] if expect_resume else [])
    if given and not rehearsal:
        raise UserInputError(f"{given[0]} needs --fail-at (the failure to rehearse)")
    if rehearsal and stage != "local":
        raise UserInputError(
            f"--fail-at with --stage {stage}: the rehearsal runs on this machine",
            hint="on ModelArts, fault_tolerance in the spec asks for restarts",
        )
    if rehearsal and dump:
        raise UserInputError("--fail-at and --dump: rehearse and dump in separate runs")


def _run_in_cloud(
    spec: Path, stage: str, nodes: int | None, overrides: list[str], profile: str | None, dump: bool
) -> None:
    """The cloud stages are a submit that waits: the same checks, upload and create."""
    if dump:
        raise UserInputError(
            f"--dump with --stage {stage}: a cloud stage's dump is staged by submit",
            hint=f"run `majob submit {spec} --stage {stage} --dump --wait`",
        )
    from majob.cli.submit import submit_and_wait

    extra = [f"resources.nodes={nodes}"] if nodes else []
    submit_and_wait(spec, stage, [*overrides, *extra], profile)
