"""``majob init``: a commented starter spec, optionally read off a script's argparse arguments.

The script is read with ``ast`` (never imported or run). Each ``add_argument("--x", ...)`` becomes
an input (names like ``data_url``, ``data_dir``), an output (``train_url``, ``output_dir``...) or a
hyperparameter with its default. Arguments ModelArts injects itself (``--init_method``,
``--rank``, ``--world_size``) are left out.

Where the local stage finds each input (``local``) is chosen by the caller, which can look at the
disk (``majob init`` finds an existing data directory or creates an empty one), so that what
``init`` writes validates and runs as it is.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from majob.spec.schema import SCHEMA_FILE

INJECTED = frozenset({"init_method", "rank", "world_size", "local_rank", "local-rank"})
_INPUT_NAMES = re.compile(
    r"^(data_url|data|data_dir|data_path|dataset|dataset_dir|train_data|"
    r"data_root|input|input_dir|.*_data_url)$"
)
_OUTPUT_NAMES = re.compile(
    r"^(train_url|output|output_dir|out_dir|save_dir|model_dir|"
    r"checkpoint_dir|ckpt_dir|output_path|log_dir|.*_output_url)$"
)


@dataclass
class ScriptArguments:
    """What a script's argparse calls say."""

    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    required: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class StandIn:
    """An input's local stand-in: its path (relative to the spec's directory) and why."""

    path: str
    note: str = "stand-in for the local stage"


def channel_names(arguments: ScriptArguments | None) -> tuple[list[str], list[str]]:
    """The input and output channel names a starter spec gets (``data_url``/``train_url`` when
    the script names none)."""
    args = arguments or ScriptArguments()
    return args.inputs or ["data_url"], args.outputs or ["train_url"]


def _add_argument_calls(source: str) -> Iterator[tuple[list[str], dict[str, ast.expr]]]:
    """Each ``add_argument`` call of ``source`` with a ``--long`` flag: its long flags as
    written and its keywords."""
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
        ):
            continue
        flags = [
            a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
        ]
        long_flags = [f for f in flags if f.startswith("--")]
        if long_flags:
            yield long_flags, {k.arg: k.value for k in node.keywords if k.arg}


def defined_flags(source: str) -> set[str]:
    """Every ``--option`` ``source``'s ``add_argument`` calls define, as written, without the
    dashes (``--learning-rate`` is ``learning-rate``: ModelArts passes a hyperparameter ``x`` as
    ``--x=value``, and argparse matches the flag as written, not its dest)."""
    return {flag[2:] for flags, _ in _add_argument_calls(source) for flag in flags}


def read_arguments(source: str) -> ScriptArguments:
    """The ``--options`` added with ``add_argument`` in ``source``."""
    found = ScriptArguments()
    for long_flags, keywords in _add_argument_calls(source):
        dest = keywords.get("dest")
        name = (
            dest.value
            if isinstance(dest, ast.Constant) and isinstance(dest.value, str)
            else long_flags[0][2:].replace("-", "_")
        )
        if name in INJECTED:
            continue
        if _INPUT_NAMES.match(name):
            found.inputs.append(name)
            continue
        if _OUTPUT_NAMES.match(name):
            found.outputs.append(name)
            continue
        default = _default_of(keywords)
        if default is None:
            found.required.append(name)
        else:
            found.hyperparameters[name] = default
    return found


def _default_of(keywords: dict[str, ast.expr]) -> Any:
    action = keywords.get("action")
    if isinstance(action, ast.Constant) and action.value in ("store_true", "store_false"):
        return action.value == "store_false"
    node = keywords.get("default")
    if node is None:
        return None
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return None
    return value if isinstance(value, (bool, int, float, str)) else None


def _yaml_scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    plain = re.fullmatch(r"[A-Za-z_./][A-Za-z0-9_./-]*", text) and text.lower() not in (
        "true",
        "false",
        "yes",
        "no",
        "null",
        "on",
        "off",
        "~",
    )
    return text if plain else '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def starter_spec(
    name: str,
    code_dir: str,
    boot_file: str,
    arguments: ScriptArguments | None = None,
    *,
    stand_ins: Mapping[str, StandIn] | None = None,
    output_dirs: Mapping[str, str] | None = None,
    ignore: Sequence[str] = (),
) -> str:
    """The text of a commented starter spec. ``stand_ins`` gives each input's ``local`` (default:
    ``data/<name>``), ``output_dirs`` each output's (default: ``out/<name>``), ``ignore`` the
    code dir's paths to leave out of the upload (the stand-ins, when they sit inside it)."""
    args = arguments or ScriptArguments()
    inputs, outputs = channel_names(arguments)
    lines = [
        *_head_lines(name, code_dir, boot_file, ignore),
        *_input_lines(name, inputs, stand_ins or {}),
        *_output_lines(name, outputs, output_dirs or {}),
        *_hyperparameter_lines(args),
        "env: {}",
        "stages:",
        "  local:",
        "    timeout: 10m",
        "  debug:                      # a short, cheap cloud job before the formal one",
        "    timeout: 30m",
    ]
    return "\n".join(lines) + "\n"


def _head_lines(name: str, code_dir: str, boot_file: str, ignore: Sequence[str]) -> list[str]:
    """The schema comment, the name, the code, the image and the resources."""
    ignored = "[" + ", ".join(_yaml_scalar(p) for p in ignore) + "]"
    return [
        f"# yaml-language-server: $schema={SCHEMA_FILE}",
        "# A majob job spec. Check it with `majob validate`, see the cloud request with",
        "# `majob compile --target rest`, run it here with `majob run <spec> --stage local`.",
        f"name: {name}",
        'description: ""',
        "code:",
        f"  dir: {_yaml_scalar(code_dir)}            # relative to this file",
        f"  boot_file: {_yaml_scalar(boot_file)}",
        f"  obs: obs://my-bucket/majob/{name}/code/   # OBS dir the code is synced to",
        f"  ignore: {ignored}  # gitignore-style patterns (.gitignore is honoured)",
        "image:                        # a preset engine, or swr: <image> + command: <boot cmd>",
        "  engine: PyTorch",
        "  version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
        "resources:",
        "  flavor: modelarts.vm.cpu.8u",
        "  nodes: 1",
    ]


def _input_lines(name: str, inputs: Sequence[str], stand_ins: Mapping[str, StandIn]) -> list[str]:
    lines = ["inputs:                       # each reaches the script as --<name>=<dir>"]
    for channel in inputs:
        stand_in = stand_ins.get(channel, StandIn(f"data/{channel}"))
        lines += [
            f"  - name: {channel}",
            f"    obs: obs://my-bucket/majob/{name}/{channel}/",
            f"    local: {_yaml_scalar(stand_in.path)}      # {stand_in.note}",
        ]
    return lines


def _output_lines(name: str, outputs: Sequence[str], out_dirs: Mapping[str, str]) -> list[str]:
    lines = ["outputs:                      # written in the container, uploaded to OBS"]
    for channel in outputs:
        lines += [
            f"  - name: {channel}",
            f"    obs: obs://my-bucket/majob/{name}/{channel}/",
            f"    local: {_yaml_scalar(out_dirs.get(channel, f'out/{channel}'))}"
            "      # a passed run copies its output here (--overwrite replaces files)",
        ]
    return lines


def _hyperparameter_lines(args: ScriptArguments) -> list[str]:
    if args.hyperparameters:
        lines = ["hyperparameters:              # passed as --<name>=<value>"]
        lines += [f"  {k}: {_yaml_scalar(v)}" for k, v in args.hyperparameters.items()]
    else:
        lines = ["hyperparameters: {}           # passed as --<name>=<value>"]
    if args.required:
        lines.append("  # required by the script, no default found: " + ", ".join(args.required))
    return lines
