"""``majob image ...`` and ``majob env pack``: runtime images and environments.

Every import beyond Typer happens inside the command bodies (dockerfile-parse, conda-pack and
the spec loader are not needed for ``majob --help``).
"""

from __future__ import annotations

import enum
import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from majob.cli.common import ProfileOption, SetOption, user_errors
from majob.errors import UserInputError

image_app = typer.Typer(
    name="image",
    help="Runtime images: preset engine check, Dockerfile generation and lint, tarball check.",
    no_args_is_help=True,
)
env_app = typer.Typer(
    name="env", help="Local Python environments for ModelArts (conda-pack).", no_args_is_help=True
)


class OutputFormat(str, enum.Enum):
    TEXT = "text"
    JSON = "json"


FormatOption = Annotated[
    OutputFormat, typer.Option("--format", help="text for people; json for tools.")
]
PythonOption = Annotated[
    str | None,
    typer.Option("--python", help="Interpreter your script runs on (default: majob's own)."),
]
SpecArgument = Annotated[Path, typer.Argument(help="Job spec (YAML).")]


def _json(data: object) -> None:
    sys.stdout.write(json.dumps(data, indent=2) + "\n")


@image_app.command("check-env")
@user_errors
def check_env_command(
    spec_path: SpecArgument,
    python: PythonOption = None,
    output_format: FormatOption = OutputFormat.TEXT,
    overrides: SetOption = None,
    profile: ProfileOption = None,
) -> None:
    """Does the spec's preset engine match the environment the script works in here?

    Exit 1 when it does not.
    """
    from majob.image.compat import check_spec_env
    from majob.spec.load import display_path, load_spec

    spec = load_spec(spec_path, overrides=overrides or (), profile=profile)
    result = check_spec_env(spec, display_path(spec_path), python)
    local = result.local
    if output_format is OutputFormat.JSON:
        _json(result.to_dict())
    else:
        torch = f", torch {local.torch}" if local.torch else ", no torch"
        cuda = f" (CUDA {local.cuda})" if local.cuda else ""
        print(f"here:   Python {local.python}{torch}{cuda}, {local.arch} ({local.executable})")
        print(f"image:  {result.image}")
        print(f"result: {result.verdict}")
        for problem in result.problems:
            print(f"  problem: {problem}")
        for note in result.notes:
            print(f"  note: {note}")
        print(f"advice: {result.advice}")
    if not result.ok:
        raise typer.Exit(1)


@image_app.command("dockerfile")
@user_errors
def dockerfile_command(
    spec_path: SpecArgument,
    python: PythonOption = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here (default: stdout).")
    ] = None,
    base: Annotated[
        str | None, typer.Option("--base", help="Base image instead of the official match.")
    ] = None,
    swr: Annotated[
        str | None,
        typer.Option("--swr", help="SWR address to push to, e.g. swr.<region>.../org/name:tag."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace --output if it exists.")] = False,
    overrides: SetOption = None,
    profile: ProfileOption = None,
) -> None:
    """Write a layered Dockerfile matching the local versions, and the spec's image block."""
    from majob.image.generate import (
        default_swr,
        find_requirements,
        render_dockerfile,
        render_image_block,
    )
    from majob.image.localenv import imported_modules, probe
    from majob.spec.load import load_spec

    spec = load_spec(spec_path, overrides=overrides or (), profile=profile)
    local = probe(python, imported_modules(spec.code.dir))
    requirements = find_requirements(spec, spec_path.resolve().parent, local)
    text = render_dockerfile(local, requirements, base, spec)
    address = swr or default_swr(spec, local)
    notes = sys.stdout
    if output is None:
        sys.stdout.write(text)
        notes = sys.stderr  # stdout is the Dockerfile: `majob image dockerfile s.yaml > Dockerfile`
        dockerfile = "Dockerfile"
    else:
        if output.exists() and not force:
            raise UserInputError(f"{output} exists", hint="pass --force to replace it")
        output.write_text(text, encoding="utf-8")
        dockerfile = str(output)
        notes.write(f"wrote {output} (packages from {requirements.source})\n")
    context = requirements.file.parent if requirements.file else Path(".")
    notes.write(
        "\nbuild and push it:\n"
        f"  docker build -f {dockerfile} -t {address} {context}\n"
        f"  docker push {address}\n"
        "then use it in the spec:\n" + render_image_block(spec, address)
    )
    if swr is None:
        notes.write("(replace ORGANIZATION with your SWR organisation, or pass --swr)\n")


@image_app.command("lint")
@user_errors
def lint_command(
    dockerfile: Annotated[Path, typer.Argument(help="The Dockerfile to check.")],
    output_format: FormatOption = OutputFormat.TEXT,
) -> None:
    """Check a Dockerfile against the ModelArts image rules; exit 1 on any finding."""
    from majob.image.lint import lint_file

    findings = lint_file(dockerfile)
    if output_format is OutputFormat.JSON:
        _json([{"file": str(dockerfile), **vars(f)} for f in findings])
    else:
        for finding in findings:
            print(finding.render(str(dockerfile)))
        noun = "finding" if len(findings) == 1 else "findings"
        print(f"{len(findings)} {noun} in {dockerfile}" if findings else f"{dockerfile}: clean")
    if findings:
        raise typer.Exit(1)


@image_app.command("inspect")
@user_errors
def inspect_command(
    tarball: Annotated[Path, typer.Argument(help="docker save or OCI-layout tarball.")],
    output_format: FormatOption = OutputFormat.TEXT,
    layer_size: Annotated[
        str, typer.Option("--layer-size", help="Largest layer (uncompressed).")
    ] = "1GB",
    layer_entries: Annotated[
        int, typer.Option("--layer-entries", help="Most entries in one layer.")
    ] = 100_000,
    advised_size: Annotated[
        str, typer.Option("--advised-size", help="Image size the guide advises.")
    ] = "15GB",
    max_size: Annotated[str, typer.Option("--max-size", help="Largest image accepted.")] = "30GB",
) -> None:
    """Sizes and entry counts of each layer, read by streaming; exit 1 over a limit."""
    from majob.image.tarball import Limits, inspect_image
    from majob.sizes import format_size, parse_size
    from majob.text import one_line, printable

    limits = Limits(
        advised_total=parse_size(advised_size),
        max_total=parse_size(max_size),
        layer_bytes=parse_size(layer_size),
        layer_entries=layer_entries,
    )
    reports = inspect_image(tarball, limits)
    if output_format is OutputFormat.JSON:
        _json([report.to_dict() for report in reports])
    else:
        for report in reports:
            # Tags and history come from the tarball: escaped, they cannot drive the terminal.
            tags = ", ".join(printable(tag) for tag in report.tags) or "untagged"
            print(f"{report.path}: {report.format}, {tags}, {len(report.layers)} layers")
            print(f"  {'layer':>5}  {'stored':>9}  {'unpacked':>9}  {'entries':>9}  created by")
            for layer in report.layers:
                made = one_line(" ".join((layer.created_by or "?").split())[:70])
                kind = "" if layer.compression == "none" else f" [{layer.compression}]"
                print(
                    f"  {layer.index:>5}  {format_size(layer.compressed_bytes):>9}  "
                    f"{format_size(layer.uncompressed_bytes):>9}  {layer.entries:>9,}  "
                    f"{made}{kind}"
                )
            print(
                f"  total  {format_size(report.total_compressed):>9}  "
                f"{format_size(report.total_uncompressed):>9}"
            )
            for finding in report.findings:
                print(f"  {finding.level}: {finding.message}")
    if not all(report.ok for report in reports):
        raise typer.Exit(1)


@env_app.command("pack")
@user_errors
def pack_command(
    name: Annotated[str | None, typer.Option("--name", "-n", help="Conda env name.")] = None,
    prefix: Annotated[
        Path | None, typer.Option("--prefix", "-p", help="Conda env directory instead of a name.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Archive (default: <env>.tar.gz).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace the archive if it exists.")] = (
        False
    ),
) -> None:
    """Pack a conda environment with conda-pack, and say how to use it on ModelArts."""
    from majob.image.envpack import advice, pack_env
    from majob.sizes import format_size

    packed = pack_env(name, prefix, output, force=force)
    print(f"packed {packed.archive} ({format_size(packed.size)})")
    for note in packed.notes:
        print(f"note: {note}")
    print()
    print("\n".join(advice(packed)))
