"""The ``majob`` Typer application. Each area registers its commands from its own module.

Nothing heavy is imported here: commands import what they need inside their bodies, so that
``majob --help`` and ``majob validate`` start fast (a test pins the modules they load).
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="majob",
    help="Move PyTorch training code to Huawei Cloud ModelArts: validate, compile, sync, run.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)


def _register() -> None:
    # Imported for their side effect of adding commands to ``app``; each module keeps its
    # third-party imports inside the command bodies.
    from majob.cli import emulator, migrate, run, spec_commands  # noqa: F401
    from majob.cli.obs import obs_app

    app.add_typer(obs_app)


_register()


def main() -> None:
    """Console-script entry point."""
    app()
