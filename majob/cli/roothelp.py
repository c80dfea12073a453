"""``majob --help`` (and ``majob`` alone) without Typer or any command module.

Typer answers ``--help`` by importing every command module to read its docstring and then its
rich help module (rich.markdown, markdown_it...): about 0.2 s before one line is printed, on
every look at the command list. This prints the same page from the command table
(``majob.cli.command_index``) with the same rich renderables and styles Typer's
``rich_format_help`` uses for a group (typer/rich_utils.py, Typer 0.26-0.28).
tests/cli/test_help.py compares the two, byte for byte, at several widths with and without
colour, so a difference in the table or in a Typer upgrade fails there. Help for a command
(``majob run --help``) is Typer's own.
"""

from __future__ import annotations

import os
import sys

from rich.columns import Columns
from rich.console import Console
from rich.highlighter import RegexHighlighter
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.theme import Theme

from majob.cli.command_index import APP_HELP, COMMAND_MODULES, ROOT_OPTIONS, SUMMARIES

# Typer's help styles and theme (rich_utils' STYLE_* and _get_rich_console), the ones a group's
# page uses.
_THEME = {
    "option": "bold cyan",
    "switch": "bold green",
    "negative_option": "bold magenta",
    "negative_switch": "bold red",
    "types": "bold yellow",
    "types_sep": "dim",
    "usage": "yellow",
}
_COMMAND_STYLE = "bold cyan"
_PANEL_BORDER = "dim"


class _OptionHighlighter(RegexHighlighter):
    """Typer's: option names and the ``Usage:`` prefix."""

    highlights = [  # noqa: RUF012 (rich reads a class attribute)
        r"(^|\W)(?P<switch>\-\w+)(?![a-zA-Z0-9])",
        r"(^|\W)(?P<option>\-\-[\w\-]+)(?![a-zA-Z0-9])",
        r"(?P<types>\<[^\>]+\>)",
        r"(?P<usage>Usage: )",
    ]


def _force_terminal() -> bool | None:
    # As Typer decides it (rich_utils.FORCE_TERMINAL), read when the help is printed.
    if os.getenv("_TYPER_FORCE_DISABLE_TERMINAL"):
        return False
    if os.getenv("GITHUB_ACTIONS") or os.getenv("FORCE_COLOR") or os.getenv("PY_COLORS"):
        return True
    return None


def _console() -> Console:
    width = os.getenv("TERMINAL_WIDTH")
    return Console(
        theme=Theme(_THEME),
        highlighter=_OptionHighlighter(),
        color_system="auto",
        force_terminal=_force_terminal(),
        width=int(width) if width else None,
    )


def program_name() -> str:
    """What Click calls the program in its usage line: ``majob``, or ``python -m majob``."""
    main = sys.modules["__main__"]
    package = getattr(main, "__package__", None)
    if not package:
        return os.path.basename(sys.argv[0])
    name = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    module = package if name == "__main__" else f"{package}.{name}"
    return f"python -m {module.lstrip('.')}"


def _panel_table(*, highlight: bool) -> Table:
    # Typer's STYLE_OPTIONS_TABLE_* and STYLE_COMMANDS_TABLE_* (the same values).
    return Table(
        highlight=highlight,
        show_header=False,
        expand=True,
        box=None,
        show_lines=False,
        leading=0,
        border_style=None,
        row_styles=None,
        pad_edge=False,
        padding=(0, 1),
    )


def _options_panel(highlighter: _OptionHighlighter) -> Panel:
    # Typer's six columns (long, short, negative long, negative short, type, help): the root's
    # two flags fill the first and the last.
    table = _panel_table(highlight=True)
    for option, help_text in ROOT_OPTIONS:
        table.add_row(
            highlighter(option),
            highlighter(""),
            highlighter(""),
            highlighter(""),
            Text(style="bold yellow", overflow="fold"),
            Columns([highlighter(Text.from_markup(help_text))]),
        )
    return Panel(table, border_style=_PANEL_BORDER, title="Options", title_align="left")


def _commands_panel(highlighter: _OptionHighlighter) -> Panel:
    names = [name for _, _, listed in COMMAND_MODULES for name in listed]
    table = _panel_table(highlight=False)
    table.add_column(style=_COMMAND_STYLE, no_wrap=True, width=max(map(len, names)))
    table.add_column("Description", justify="left", no_wrap=False, ratio=10)
    for name in names:
        table.add_row(Text(name), highlighter(Text.from_markup(SUMMARIES[name])))
    return Panel(table, border_style=_PANEL_BORDER, title="Commands", title_align="left")


def print_root_help() -> None:
    """Print the page ``majob --help`` shows."""
    console = _console()
    highlighter = _OptionHighlighter()
    usage = f"Usage: {program_name()} [OPTIONS] COMMAND [ARGS]..."
    console.print(Padding(highlighter(usage), 1), style="bold")
    console.print(Padding(highlighter(Text.from_markup(APP_HELP)), (0, 1, 1, 1)))
    console.print(_options_panel(highlighter))
    console.print(_commands_panel(highlighter))
    console.print()  # Click echoes the (empty) string Typer's formatter returns: one more line
