"""The guard: what a local run did that the training container would not allow or would lose.

Only the run's processes carry it: ``prepare`` writes a ``sitecustomize.py`` that loads
``guard_site.py`` into a directory the runner puts first on the nodes' ``PYTHONPATH``
(subprocesses the script starts inherit it), next to a JSON configuration. After the run
``findings`` reads back:

- **write**: a file opened for writing outside the output dirs, ``MA_LOG_DIR`` and the temp dir:
  ModelArts uploads only the outputs, so such a file is lost with the container (a relative path
  lands in the code dir), or the write fails (a path of this machine);
- **read**: an absolute path under the user's home, the original code dir or an input's original
  location, which the container does not have (it gets the code copy and ``--<input>`` dirs).

Each finding names the user's ``file:line`` (the original file, not the copy) that did it.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from majob.runner.layout import ContainerPaths

GUARD_ENV = "MAJOB_GUARD"
RUN_STEPS_DIR = "steps"
"""The run directory's folder of majob's step files (``steps/<worker>/majob_steps_<R>.jsonl``)."""
_SITE_SOURCE = Path(__file__).with_name("guard_site.py")
# The run's sitecustomize.py: loads guard_site.py by path (any interpreter, no majob needed).
_SITECUSTOMIZE = """\
\"\"\"majob's guard for this run only; see majob/runner/guard_site.py.\"\"\"
import importlib.util as _util

_spec = _util.spec_from_file_location("_majob_guard_site", {source!r})
_guard = _util.module_from_spec(_spec)
_spec.loader.exec_module(_guard)
_guard.install(__file__)
"""


@dataclass(frozen=True, order=True)
class GuardFinding:
    """One thing the script did that would not work the same on ModelArts."""

    kind: Literal["write", "read"]
    path: str
    where: str  # "file:line" in the original code, "" when no frame of the user's code did it
    node: str

    def describe(self) -> str:
        by = self.where or "(not from the code dir)"
        if self.kind == "write":
            return (
                f"{by}: writes {self.path}, outside the output dirs: ModelArts would not keep it "
                "(write under an output, e.g. --train_url)"
            )
        return (
            f"{by}: reads {self.path}, which the container does not have "
            "(declare it as an input and read the --<input> dir)"
        )


@dataclass(frozen=True)
class GuardSetup:
    """Where the guard lives for one run; ``env`` goes into every node's environment."""

    directory: Path

    @property
    def site_dir(self) -> Path:
        return self.directory / "site"

    @property
    def env(self) -> dict[str, str]:
        return {GUARD_ENV: str(self.directory / "config.json")}


def prepare(
    directory: Path,
    *,
    run_dir: Path,
    paths: ContainerPaths,
    code_origin: Path,
    input_origins: Iterable[Path],
    home: Path,
) -> GuardSetup:
    """Write the guard's ``sitecustomize.py`` and configuration under ``directory``."""
    setup = GuardSetup(directory)
    setup.site_dir.mkdir(parents=True, exist_ok=True)
    site_file = setup.site_dir / "sitecustomize.py"
    site_file.write_text(_SITECUSTOMIZE.format(source=str(_SITE_SOURCE)), encoding="utf-8")
    temp = tempfile.gettempdir()  # the nodes inherit TMPDIR & co., so they agree
    config = {
        "code_copy": str(paths.code_dir),
        "code_origin": str(code_origin),
        "write_ok": [
            str(p)
            for p in (*paths.outputs.values(), paths.log_dir, *paths.writable_mounts, *paths.caches)
        ]
        # majob's own step files (perf/bootstrap.py), written from the script's optimizer step
        + [str(run_dir / RUN_STEPS_DIR)],
        "read_only": [str(p) for p in paths.mounts.values() if p not in paths.writable_mounts],
        "container_root": str(paths.root),
        "read_ok": [str(run_dir), str(run_dir.resolve())],
        "read_watch": sorted({str(code_origin), *(str(p) for p in input_origins), str(home)}),
        "home": str(home),
        "temp": sorted({temp, os.path.realpath(temp)}),
        "events_dir": str(directory),
    }
    (directory / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return setup


def findings(directory: Path) -> list[GuardFinding]:
    """Every distinct finding the run's processes recorded, sorted; one that several nodes
    made (every rank writing the same file) is kept once, for the lowest node."""
    found: dict[tuple[str, str, str], GuardFinding] = {}
    for events in directory.glob("events-*.jsonl"):
        for line in events.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                event = json.loads(line)
                kind = event["kind"]
                if kind not in ("write", "read"):
                    continue
                finding = GuardFinding(kind, event["path"], event["where"], str(event["node"]))
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by a killed process
            key = (finding.kind, finding.path, finding.where)
            if key not in found or _node_order(finding) < _node_order(found[key]):
                found[key] = finding
    return sorted(found.values())


def _node_order(finding: GuardFinding) -> int:
    return int(finding.node) if finding.node.isdigit() else 1 << 30
