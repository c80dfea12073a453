"""The table of majob's commands: which module defines each, and the summary its help lists.

Light on purpose (no Typer, no command module): ``main`` reads it to build only the module a
command comes from, and ``majob --help`` is printed from it without importing any command module
(``majob.cli.roothelp``). tests/cli/test_help.py holds the names to what the modules define and
the summaries to their docstrings, by comparing that help with Typer's own, byte for byte.
"""

from __future__ import annotations

APP_HELP = (
    "Move PyTorch training code to Huawei Cloud ModelArts: validate, compile, sync, run, submit."
)

# The command modules in the order `majob --help` lists them: (module under majob.cli, its Typer,
# the top-level names that Typer adds). A Typer with a name is a group (`majob obs ...`); one
# without merges its commands into `majob`.
COMMAND_MODULES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("spec_commands", "commands", ("validate", "compile", "schema", "init")),
    ("run", "commands", ("run",)),
    ("runs", "runs_app", ("runs",)),
    ("submit", "commands", ("submit",)),
    ("jobs", "commands", ("status", "logs", "list", "stop", "delete", "flavors", "engines")),
    ("pipeline", "commands", ("pipeline", "history", "checklist")),
    ("sweep", "commands", ("sweep",)),
    ("migrate", "commands", ("check", "migrate")),
    ("emulator", "emulator_app", ("emulator",)),
    ("obs", "obs_app", ("obs",)),
    ("sync", "commands", ("sync",)),
    ("image", "image_app", ("image",)),
    ("image", "env_app", ("env",)),
    ("precision", "commands", ("compare",)),
    ("precheck", "commands", ("precheck",)),
    ("perf", "commands", ("perf",)),
    ("data", "data_app", ("data",)),
)

# What the command list says of each: the first paragraph of its help (a docstring's first line,
# or a group's help=), as Typer lists it.
SUMMARIES: dict[str, str] = {
    "validate": "Check job specs; print every problem at file:line:col. Exit 2 if any is invalid.",
    "compile": "Print what ModelArts would receive for SPEC (a dry run: nothing is sent).",
    "schema": "Print the JSON Schema of the job spec (for editor completion).",
    "init": (
        "Write a commented starter spec; with SCRIPT, propose inputs, outputs and hyperparameters."
    ),
    "run": (
        "Run a stage of SPEC. `--stage local` runs the nodes here, as in the training container."
    ),
    "runs": (
        "List, show and clean local runs (.majob/runs). After each `majob run`, runs beyond the "
        "newest 20 and older than 1 day are removed (MAJOB_RUNS_KEEP=N|all, "
        "MAJOB_RUNS_MAX_AGE=12h|7d...)."
    ),
    "submit": "Check SPEC, upload its code, and create the ModelArts training job (exactly once).",
    "status": "Show a job's phase, tasks, exit codes, restarts and recent events.",
    "logs": "Print a job's log: all tasks merged, each line prefixed with its task, or one task's.",
    "list": "List the newest jobs in a table.",
    "stop": "Terminate a job (Creating, Pending or Running).",
    "delete": "Delete a job and its record (stop it first if it runs).",
    "flavors": "List the resource flavors the service offers.",
    "engines": "List the preset engines (image.engine and image.version) the service offers.",
    "pipeline": (
        "Run local → debug → formal, each after the one before passed; re-runs skip passed stages."
    ),
    "history": "The ledger: each stage run with its result, digests, job, duration and metrics.",
    "checklist": (
        "The migration checklist: each item's status from majob check, the spec and the ledger."
    ),
    "sweep": "Run many trials of one spec, searched by Optuna; Ctrl-C leaves the trials running.",
    "check": "Report what keeps training code from running on ModelArts (rule ids MA000-MA403).",
    "migrate": (
        "Rewrite code with a libcst codemod that keeps formatting and comments (idempotent)."
    ),
    "emulator": "Run local emulators of the cloud services (no account needed).",
    "obs": "List, copy, sync and remove objects on OBS; make buckets.",
    "sync": (
        "Upload SPEC's code dir to its code.obs: the files majob submit would send, nothing else."
    ),
    "image": "Runtime images: preset engine check, Dockerfile generation and lint, tarball check.",
    "env": "Local Python environments for ModelArts (conda-pack).",
    "compare": (
        "Compare run B against run A: per-API dumps, loss curves, checkpoints. Exit 1 if they "
        "differ."
    ),
    "precheck": "Check each dumped API's output against the CPU benchmark by msprobe's standard.",
    "perf": "Where a training step's time goes and what to change: findings ranked by time saved.",
    "data": "Large data: size the inputs against each node's /cache, plan the OBS -> SFS path.",
}

# The root's own options, as its help lists them (``--version`` is defined in majob.cli.app).
ROOT_OPTIONS: tuple[tuple[str, str], ...] = (
    ("--version", "Print majob's version."),
    ("--help", "Show this message and exit."),
)
