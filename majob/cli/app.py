"""The ``majob`` Typer application, composed from the command modules.

Nothing heavy is imported here: commands import what they need inside their bodies, so that
``majob --help`` and ``majob validate`` start fast (a test pins the modules they load).
"""

from __future__ import annotations

from typing import Annotated

import typer

from majob.cli import (
    emulator,
    image,
    jobs,
    migrate,
    obs,
    pipeline,
    precision,
    run,
    runs,
    spec_commands,
    submit,
    sweep,
    sync,
)
from majob.cli.helpformat import PlainHelpGroup

app = typer.Typer(
    name="majob",
    help="Move PyTorch training code to Huawei Cloud ModelArts: validate, compile, sync, run, "
    "submit.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
    cls=PlainHelpGroup,
)


def _print_version(value: bool) -> None:
    if not value:
        return
    from importlib.metadata import PackageNotFoundError, version

    try:
        installed = version("majob")
    except PackageNotFoundError:  # run from a source tree that was never installed
        from majob.version import __version__ as installed
    typer.echo(f"majob {installed}")
    raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print majob's version."
        ),
    ] = False,
) -> None:
    """Move PyTorch training code to Huawei Cloud ModelArts: validate, compile, sync, run."""


# Each command module declares its own commands and imports nothing from here; this module
# composes them (a Typer added without a name merges its commands into ``majob``). The modules
# keep their third-party imports inside the command bodies.
for _group in (
    spec_commands.commands,
    run.commands,
    runs.runs_app,
    submit.commands,
    jobs.commands,
    pipeline.commands,
    sweep.commands,
    migrate.commands,
    emulator.emulator_app,
    obs.obs_app,
    sync.commands,
    image.image_app,
    image.env_app,
    precision.commands,
):
    app.add_typer(_group)


def main() -> None:
    """Console-script entry point."""
    app()
