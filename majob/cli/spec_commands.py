"""``majob validate``, ``compile``, ``schema`` and ``init``: the spec's commands."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from majob.cli.common import (
    ProfileOption,
    SetOption,
    print_error,
    user_errors,
    warn_about_sets,
)
from majob.errors import ConfigError, SpecError, UserInputError
from majob.text import counted, printable

if TYPE_CHECKING:
    from majob.spec.models import JobSpec
    from majob.spec.starter import ScriptArguments, StandIn

commands = typer.Typer()
"""This module's commands; ``majob.cli.app`` adds them to ``majob``."""


@commands.command()
@user_errors
def validate(
    specs: Annotated[list[Path], typer.Argument(help="Job spec files.", show_default=False)],
    set_: SetOption = None,
    profile: ProfileOption = None,
    online: Annotated[
        bool,
        typer.Option("--online", help="Also run submit's pre-flight checks against the service."),
    ] = False,
    stage: Annotated[
        str, typer.Option("--stage", help="The cloud stage --online checks: debug or formal.")
    ] = "debug",
) -> None:
    """Check job specs; print every problem at file:line:col. Exit 2 if any is invalid.

    Offline, a flavor or engine that neither majob's catalogue nor the service's cached lists
    offer is a warning (with the closest known one); --online asks the service, and there it
    is an error."""
    from majob.spec.load import load_spec
    from majob.spec.models import STAGES

    failed = False
    for path in specs:
        try:
            spec = load_spec(path, overrides=set_ or (), profile=profile)
        except SpecError as error:
            print_error(error)
            failed = True
            continue
        warn_about_sets(spec, set_, list(STAGES))
        if online:
            from majob.cli.submit import validate_online

            problems = validate_online(path, stage, set_ or [], profile)
            if problems:
                for problem in problems:
                    sys.stderr.write(f"error: {path}: {problem}\n")
                failed = True
                continue
        else:
            _warn_unoffered(path, spec)
        nodes = spec.resources.nodes
        image = spec.image.swr or f"{spec.image.engine} {spec.image.version}"
        typer.echo(
            f"ok: {path}: {spec.name} ({counted(nodes, 'node')} of "
            f"{spec.resources.flavor or f'pool {spec.resources.pool}'}, {image})"
        )
    if failed:
        raise typer.Exit(2)


def _warn_unoffered(path: Path, spec: JobSpec) -> None:
    """Warn about a flavor or engine that neither the catalogue nor a cached list offers."""
    from majob.service.offerings import cached_offerings
    from majob.spec.offered import known_offerings, unoffered, written_at

    known, source = known_offerings(cached_offerings())
    for item in unoffered(spec, known, source):
        sys.stderr.write(f"warning: {written_at(path, item)}: {item.path}: {item.message}\n")


class CompileTarget(str, Enum):
    sdk = "sdk"
    rest = "rest"


class Format(str, Enum):
    json = "json"
    python = "python"


class StageName(str, Enum):
    local = "local"
    debug = "debug"
    formal = "formal"


@commands.command("compile")
@user_errors
def compile_(
    spec_path: Annotated[Path, typer.Argument(metavar="SPEC", help="Job spec file.")],
    target: Annotated[
        CompileTarget,
        typer.Option(help="sdk: the ModelArts SDK Estimator call; rest: the v2 body."),
    ] = CompileTarget.rest,
    stage: Annotated[StageName, typer.Option(help="Which stage's overrides apply.")] = (
        StageName.formal
    ),
    output_format: Annotated[
        Format | None,
        typer.Option("--format", help="json (default) or python (the notebook snippet, sdk only)."),
    ] = None,
    set_: SetOption = None,
    profile: ProfileOption = None,
) -> None:
    """Print what ModelArts would receive for SPEC (a dry run: nothing is sent).

    Each cloud stage writes under its own folder of every output (<output obs>/debug/,
    <output obs>/formal/) unless stages.<stage>.outputs names one; the folders are said on
    stderr, so stdout stays the JSON or the snippet."""
    from majob.compile.common import stage_folder_notes
    from majob.spec.load import load_spec

    spec = load_spec(spec_path, overrides=set_ or (), profile=profile)
    warn_about_sets(spec, set_, [stage.value])
    # A dry run shows what is sent, but not the values the spec took from the environment.
    masker = spec.from_environ.masker()
    chosen = output_format or Format.json
    if target is CompileTarget.rest and chosen is Format.python:
        raise UserInputError("--format python is for --target sdk; the REST body is JSON")
    for note in stage_folder_notes(spec, stage.value):
        sys.stderr.write(f"note: {printable(note)}\n")
    if target is CompileTarget.rest:
        from majob.compile.rest import to_rest_body

        document = masker.data(to_rest_body(spec, stage.value))
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        return
    from majob.compile.sdk import to_estimator

    call = to_estimator(spec, stage.value).masked(masker)
    if chosen is Format.python:
        sys.stdout.write(call.to_python())
    else:
        sys.stdout.write(json.dumps(call.to_json(), indent=2, ensure_ascii=False) + "\n")


@commands.command()
@user_errors
def schema(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Print the JSON Schema of the job spec (for editor completion)."""
    from majob.spec.schema import spec_json_schema

    text = json.dumps(spec_json_schema(), indent=2, sort_keys=False) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}")


@commands.command()
@user_errors
def init(
    script: Annotated[
        Path | None,
        typer.Argument(help="Training script; its argparse arguments seed the spec."),
    ] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="Spec file to write.")] = Path(
        "majob.yaml"
    ),
    name: Annotated[str | None, typer.Option(help="Job name (default: from the script).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """Write a commented starter spec; with SCRIPT, propose inputs, outputs and hyperparameters.

    Each input's local stand-in is an existing data directory near the script (data/, or one
    named like the input), else an empty data/<input>/ created next to the spec: what init
    writes validates and runs as it is.
    """
    from majob.spec.starter import channel_names, starter_spec

    if output.exists() and not force:
        raise UserInputError(f"{output} exists", hint="pass --force to overwrite it")
    arguments = None
    spec_dir = output.resolve().parent
    if script is not None:
        arguments = _script_arguments(script)
        code_root = script.resolve().parent
        boot_file = script.name
        default_name = code_root.name if script.stem in ("train", "main") else script.stem
    else:
        code_root, boot_file, default_name = spec_dir, "train.py", Path.cwd().name
    job_name = _job_name(name, default_name)
    inputs, outputs = channel_names(arguments)
    stand_ins = {channel: _stand_in(channel, code_root, spec_dir) for channel in inputs}
    out_dirs = {channel: spec_dir / "out" / channel for channel in outputs}
    # Stand-ins and outputs inside the code dir must not travel with the code (upload, copy).
    local_dirs = [spec_dir / s.path for s in stand_ins.values()] + list(out_dirs.values())
    ignore = sorted({f"/{rel.as_posix()}/" for rel in _below(local_dirs, code_root)})
    text = starter_spec(
        job_name,
        os.path.relpath(code_root, spec_dir),
        boot_file,
        arguments,
        stand_ins=stand_ins,
        output_dirs={c: os.path.relpath(d, spec_dir) for c, d in out_dirs.items()},
        ignore=ignore,
    )
    _create_stand_ins(stand_ins.values(), spec_dir)
    output.write_text(text, encoding="utf-8")
    if not (code_root / boot_file).is_file():
        typer.echo(
            f"note: {code_root / boot_file} does not exist yet: write it, or pass your script"
        )
    typer.echo(
        f"wrote {output}: check it with `majob validate {output}`, try it with `majob run {output}`"
    )


def _script_arguments(script: Path) -> ScriptArguments:
    """The argparse arguments ``script`` declares, a ``UserInputError`` if it cannot be read."""
    from majob.spec.starter import read_arguments

    try:
        source = script.read_text(encoding="utf-8")
    except OSError as error:
        raise UserInputError(f"cannot read {script}: {error.strerror}") from None
    try:
        return read_arguments(source)
    except SyntaxError as error:
        raise UserInputError(
            f"{script}:{error.lineno}:{error.offset}: not valid Python: {error.msg}"
        ) from None


def _job_name(name: str | None, default_name: str) -> str:
    """``name``, or ``default_name`` made a job name; ``ConfigError`` if it cannot be one."""
    job_name = name or re.sub(r"[^A-Za-z0-9_-]", "-", default_name)[:64] or "job"
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", job_name):
        raise ConfigError(f"job name {job_name!r} must be 1-64 of A-Z a-z 0-9 _ -")
    return job_name


def _create_stand_ins(stand_ins: Iterable[StandIn], spec_dir: Path) -> None:
    """Create the stand-in directories that do not exist, so the spec runs as written."""
    for stand_in in stand_ins:
        directory = spec_dir / stand_in.path
        if not directory.exists():
            directory.mkdir(parents=True)
            typer.echo(f"created {directory} (empty): put a small sample of the data there")


# Where `majob init` looks for an existing local copy of an input, in order: what init itself
# creates, then a directory named like the input or data/ beside the script or one level up.
_DATA_DIR_NAMES = ("{channel}", "data")


def _stand_in(channel: str, code_root: Path, spec_dir: Path) -> StandIn:
    from majob.spec.starter import StandIn

    own = spec_dir / "data" / channel
    candidates = [own] + [
        base / pattern.format(channel=channel)
        for base in (code_root, code_root.parent)
        for pattern in _DATA_DIR_NAMES
    ]
    for candidate in candidates:
        if candidate.is_dir() and candidate != spec_dir and candidate != code_root:
            note = "stand-in for the local stage"
            if candidate != own:
                note = "found by majob init: check it is the data the script reads"
            return StandIn(os.path.relpath(candidate, spec_dir), note)
    return StandIn(
        os.path.relpath(own, spec_dir), "created empty by majob init: put sample data here"
    )


def _below(paths: list[Path], root: Path) -> list[Path]:
    """The ``paths`` inside ``root``, relative to it."""
    found = []
    for path in paths:
        try:
            found.append(path.resolve().relative_to(root))
        except ValueError:
            continue
    return found
