"""Every command's help: plain metavars, no Python type names, flags without a value label."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import version
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from majob.cli.app import app

runner = CliRunner()
# Typer's own labels: <bool>, <str>, <path>, <list[Path]>, <int range>, <sdk|rest>...
TYPE_NAME = re.compile(
    r"<(?:bool|str|int|float|path|file|datetime|list\[[^>]*\]|(?:int|float) range|\w+(?:\|\w+)+)>"
)


def _command_paths(command: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = [prefix]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        paths += _command_paths(sub, (*prefix, name))
    return paths


COMMANDS = _command_paths(typer.main.get_command(app))


def test_every_command_is_covered() -> None:
    assert {("run",), ("runs", "clean"), ("obs", "sync"), ("emulator", "obs")} <= set(COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: " ".join(p) or "majob")
def test_help_shows_plain_metavars(path: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    result = runner.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert TYPE_NAME.findall(result.stdout) == []
    assert "--no-no-" not in result.stdout
    for line in result.stdout.splitlines():
        if "--help" in line:  # a flag: nothing between its name and its help
            assert re.search(r"--help\s+Show this message and exit\.", line), line


def test_option_labels_are_click_style(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    words = [line.split() for line in runner.invoke(app, ["run", "--help"]).stdout.splitlines()]
    rows = {w[1]: w[2:] for w in words if len(w) > 2 and w[1].startswith("--")}
    assert rows["--nodes"][:2] == ["INTEGER", "[x>=1]"]
    assert rows["--input"][0] == "TEXT"
    assert rows["--runs-dir"][0] == "PATH"
    assert rows["--strict"][0] == "Fail"  # a flag: straight to its help
    compile_rows = runner.invoke(app, ["compile", "--help"]).stdout
    assert "[sdk|rest]" in compile_rows
    validate_rows = runner.invoke(app, ["validate", "--help"]).stdout
    assert re.search(r"specs(\.\.\.)?\s+PATH\s+Job spec files", validate_rows)


def test_no_auth_is_one_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    out = runner.invoke(app, ["emulator", "obs", "--help"]).stdout
    (line,) = [ln for ln in out.splitlines() if "--no-auth" in ln]
    assert re.search(r"--no-auth\s+Accept requests without checking signatures\.", line)


def test_version_comes_from_the_package_metadata() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "majob", "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"majob {version('majob')}\n"


def test_each_commands_summary_is_one_line_of_its_docstring() -> None:
    # The command list shows the first paragraph with its line breaks kept: a summary written
    # over two source lines breaks mid-sentence there.
    def summaries(command: Any, prefix: str = "") -> dict[str, str]:
        found = {}
        for name, sub in getattr(command, "commands", {}).items():
            found[prefix + name] = (sub.help or "").split("\n\n")[0].strip()
            found.update(summaries(sub, prefix + name + " "))
        return found

    found = summaries(typer.main.get_command(app))
    assert len(found) > 20
    assert {name: text for name, text in found.items() if "\n" in text} == {}


def test_a_typer_outside_the_pinned_range_keeps_its_own_labels() -> None:
    # Typer 0.29 (pip lets a user upgrade it after majob) has no click type on its parameters:
    # the help then reads as that Typer writes it, and no command breaks.
    from types import SimpleNamespace

    from majob.cli.helpformat import _plain

    param = SimpleNamespace(metavar=None, name="paths")
    _plain([param])
    assert param.metavar is None and not hasattr(param, "type")


def test_the_command_table_names_what_each_module_defines() -> None:
    # main() builds only the module a command comes from, found by this table: a command added
    # to a module but not to the table would be "No such command" when run by its name.
    from majob.cli.app import build_app
    from majob.cli.command_index import COMMAND_MODULES

    listed = [name for _, _, names in COMMAND_MODULES for name in names]
    assert len(listed) == len(set(listed))
    assert list(typer.main.get_command(app).commands) == listed  # type: ignore[attr-defined]
    for _, _, names in COMMAND_MODULES:
        for name in names:
            alone = typer.main.get_command(build_app(name))
            assert set(alone.commands) == {name}, name  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("args", "modules"),
    [
        (["check", "--help"], {"majob.cli.migrate"}),
        (["obs", "ls", "--help"], {"majob.cli.obs"}),
        (["--help"], set()),
        ([], set()),
        (["chekc"], {"majob.cli.migrate", "majob.cli.obs", "majob.cli.emulator"}),
        (["--version"], set()),
    ],
)
def test_a_command_loads_its_own_module_alone(args: list[str], modules: set[str]) -> None:
    code = (
        "import sys\nfrom majob.cli.app import main\n"
        f"sys.argv = ['majob', *{args!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('\\n'.join(m for m in sys.modules if m.startswith('majob.cli.')), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    loaded = set(done.stderr.split()) - {
        "majob.cli.app",
        "majob.cli.command_index",
        "majob.cli.root",
        "majob.cli.roothelp",
        "majob.cli.helpformat",
    }
    commands = {m for m in loaded if m.count(".") == 2 and "common" not in m}
    assert modules <= loaded, done.stderr
    if len(modules) <= 1:  # one command: its module and the helpers it imports, no other command
        assert commands - modules <= {"majob.cli.common", "majob.cli.follow", "majob.cli.jobtext"}


# Typer's page for the root, rendered by Typer itself from every command module.
TYPER_ROOT_HELP = (
    "import sys\nfrom majob.cli.app import build_app\n"
    "build_app()(['--help'], prog_name='python -m majob')\n"
)


@pytest.mark.parametrize(("width", "colour"), [("40", ""), ("80", "1"), ("120", ""), ("200", "1")])
def test_the_root_help_is_typers_page_byte_for_byte(width: str, colour: str) -> None:
    # `majob --help` is printed from the command table without Typer (majob.cli.roothelp): a
    # summary that drifts from its docstring, a command missing from the table, or a Typer whose
    # page looks different fails here.
    env = {**os.environ, "COLUMNS": width, "FORCE_COLOR": colour}
    ours = subprocess.run(
        [sys.executable, "-m", "majob", "--help"], env=env, capture_output=True, check=False
    )
    typers = subprocess.run(
        [sys.executable, "-c", TYPER_ROOT_HELP], env=env, capture_output=True, check=False
    )
    assert (ours.returncode, typers.returncode) == (0, 0), ours.stderr + typers.stderr
    assert b"Commands" in ours.stdout and ours.stdout == typers.stdout
    if colour:
        assert b"\x1b[" in ours.stdout


def test_majob_alone_prints_the_root_help_and_exits_2() -> None:
    done = subprocess.run([sys.executable, "-m", "majob"], capture_output=True, check=False)
    assert done.returncode == 2
    assert b"Usage: python -m majob [OPTIONS] COMMAND [ARGS]..." in done.stdout


def test_the_root_help_loads_neither_typer_nor_a_command_module() -> None:
    code = (
        "import sys\nfrom majob.cli.app import main\nsys.argv = ['majob', '--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('\\n'.join(sys.modules), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    loaded = set(done.stderr.split())
    assert "majob.cli.roothelp" in loaded  # the fast page ran
    heavy = {m for m in loaded if m.split(".")[0] in {"typer", "pydantic", "ruamel", "click"}}
    assert heavy == set()
    assert {m for m in loaded if m.startswith("majob.cli.")} == {
        "majob.cli.app",
        "majob.cli.command_index",
        "majob.cli.roothelp",
    }


def test_the_tables_summaries_are_the_commands_own() -> None:
    # The page above fails on any difference; this names the command whose docstring (or group
    # help=) changed without majob/cli/command_index.py's SUMMARIES.
    from majob.cli.command_index import SUMMARIES

    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    own = {
        name: (c.short_help or c.help or "").split("\n\n")[0].strip()
        for name, c in commands.items()
    }
    assert own == SUMMARIES


def test_a_groups_subcommand_is_built_alone_and_reads_the_same() -> None:
    # `majob obs sync` builds the obs group with sync alone (main passes the second word): the
    # same command as in the whole application, and a name the group lacks keeps the group whole.
    from majob.cli.app import build_app

    whole = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    groups = {n: c for n, c in whole.items() if getattr(c, "commands", None)}
    assert {"obs", "emulator", "image", "runs", "data"} <= set(groups)
    for name, group in groups.items():
        for sub in group.commands:
            alone = typer.main.get_command(build_app(name, sub)).commands[name]  # type: ignore[attr-defined]
            assert list(alone.commands) == [sub], (name, sub)
            names = [[p.name for p in c.commands[sub].params] for c in (alone, group)]
            assert names[0] == names[1], (name, sub)
        kept = typer.main.get_command(build_app(name, "no-such")).commands[name]  # type: ignore[attr-defined]
        assert set(kept.commands) == set(group.commands)
