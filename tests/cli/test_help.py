"""Every command's help: plain metavars, no Python type names, flags without a value label."""

from __future__ import annotations

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
    from majob.cli.app import COMMAND_MODULES, build_app

    listed = [name for _, _, names in COMMAND_MODULES for name in names]
    assert len(listed) == len(set(listed))
    assert list(typer.main.get_command(app).commands) == listed  # type: ignore[attr-defined]
    for _, _, names in COMMAND_MODULES:
        for name in names:
            alone = typer.main.get_command(build_app(name))
            assert set(alone.commands) == set(names), name  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("args", "modules"),
    [
        (["check", "--help"], {"majob.cli.migrate"}),
        (["obs", "ls", "--help"], {"majob.cli.obs"}),
        (["--help"], {"majob.cli.migrate", "majob.cli.obs", "majob.cli.emulator"}),
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
    loaded = set(done.stderr.split()) - {"majob.cli.app", "majob.cli.helpformat"}
    commands = {m for m in loaded if m.count(".") == 2 and "common" not in m}
    assert modules <= loaded, done.stderr
    if len(modules) <= 1:  # one command: its module and the helpers it imports, no other command
        assert commands - modules <= {"majob.cli.common", "majob.cli.follow", "majob.cli.jobtext"}
