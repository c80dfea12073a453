"""``python -m majob.emulator.obs``: the ``obs`` command (declared once, in
``majob.emulator.obs_command``; ``majob emulator obs`` runs the same) without the CLI.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import typer

from majob.emulator.obs_command import obs_command
from majob.errors import MajobError


@functools.wraps(obs_command)
def _obs_reporting_errors(*args: Any, **kwargs: Any) -> None:
    """``obs_command``, a ``MajobError`` printed as ``error: ...`` lines and its exit code."""
    try:
        obs_command(*args, **kwargs)
    except MajobError as error:
        for line in error.lines():
            sys.stderr.write(f"error: {line}\n")
        raise typer.Exit(error.exit_code) from None


def main(argv: list[str] | None = None) -> int:
    """Run the ``obs`` command with ``argv`` (default: this process's arguments)."""
    app = typer.Typer(add_completion=False, pretty_exceptions_show_locals=False)
    app.command()(_obs_reporting_errors)
    args = sys.argv[1:] if argv is None else argv
    try:
        app(args, prog_name="python -m majob.emulator.obs")
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
