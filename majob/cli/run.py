"""``majob run``: run a spec's stage. The local stage runs here, in an emulated container."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from majob.cli.common import ProfileOption, SetOption, user_errors
from majob.errors import ConfigError, UserInputError

if TYPE_CHECKING:
    from majob.runner.local import RunResult

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


def _raise_keyboard_interrupt(signum: int, frame: FrameType | None) -> None:
    # A SIGTERM to majob stops the nodes the same way Ctrl-C does.
    raise KeyboardInterrupt


def _summary(result: RunResult) -> list[str]:
    nodes = len(result.nodes)
    lines = [
        f"run {result.run_id}: {result.status} in {result.duration:.1f}s "
        f"({nodes} node{'s' if nodes > 1 else ''}); record: {result.record}"
    ]
    for output in result.outputs:
        target = result.copied_to.get(output.channel)
        path = (target or result.output_dir(output.channel)) / output.path
        where = f" -> {path}"
        lines.append(f"  output {output.channel}: {output.path} ({output.size} bytes){where}")
    if result.findings:
        lines.append(f"guard: {len(result.findings)} finding(s) (--strict makes them fail the run)")
        lines += [f"  {finding.describe()}" for finding in result.findings]
    return lines


@commands.command()
@user_errors
def run(
    spec: Annotated[Path, typer.Argument(help="The job spec (YAML).", show_default=False)],
    stage: Annotated[
        str, typer.Option("--stage", help="local (this machine), debug or formal.")
    ] = "local",
    nodes: Annotated[
        int | None, typer.Option("--nodes", min=1, help="Override the stage's node count.")
    ] = None,
    set_: SetOption = None,
    input_: Annotated[
        list[str] | None,
        typer.Option("--input", help="NAME=PATH: local data for an input. Repeatable."),
    ] = None,
    python: Annotated[
        str | None,
        typer.Option(
            "--python",
            envvar="MAJOB_PYTHON",
            help="Interpreter the nodes run, e.g. a project venv (default: majob's own).",
        ),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Fail when the guard finds writes/reads to fix.")
    ] = False,
    timeout: Annotated[
        str | None, typer.Option("--timeout", help="Stop the run after this long, e.g. 90s, 10m.")
    ] = None,
    runs_dir: Annotated[
        Path | None,
        typer.Option("--runs-dir", help="Where run records go (default: ./.majob/runs)."),
    ] = None,
    profile: ProfileOption = None,
) -> None:
    """Run a stage of SPEC. `--stage local` runs the nodes here, as in the training container."""
    if stage not in STAGES:
        raise UserInputError(f"--stage {stage!r}: choose one of {', '.join(STAGES)}")
    if stage != "local":
        # The cloud stages are a submit that waits: the same checks, upload and create.
        from majob.cli.jobs import run_cloud_stage

        extra = [f"resources.nodes={nodes}"] if nodes else []
        run_cloud_stage(spec, stage, [*(set_ or []), *extra], profile)
        return
    from majob.runner.local import run_local
    from majob.spec.load import load_spec

    job = load_spec(spec, overrides=set_ or (), profile=profile)
    inputs = _parse_inputs(input_ or [])
    limit = _parse_timeout(timeout)
    previous = signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    try:
        result = run_local(
            job,
            "local",
            nodes=nodes,
            inputs=inputs,
            python=python,
            strict=strict,
            timeout=limit,
            runs_dir=runs_dir,
        )
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted; every node was stopped\n")
        raise typer.Exit(130) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    for line in _summary(result):
        typer.echo(line)
