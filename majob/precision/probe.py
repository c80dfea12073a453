"""The one host-side module that imports msprobe (``mindstudio-probe``, the ``precision`` extra).

``compare_pair`` is what ``msprobe compare -tp TARGET/dump.json -gp GOLDEN/dump.json -o OUT``
does (its auto mode on two files ends in ``pt_compare``), called in this process so that one
msprobe import serves every step and rank.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import logging
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

from majob.errors import ConfigError

INSTALL_HINT = "pip install 'majob[precision]'  (or: pip install mindstudio-probe)"
MODULE = "msprobe"


def require_msprobe() -> None:
    """One line with the install command when msprobe is missing."""
    if importlib.util.find_spec(MODULE) is None:
        raise ConfigError("mindstudio-probe (msprobe) is not installed", hint=INSTALL_HINT)


@contextlib.contextmanager
def quiet_msprobe() -> Iterator[None]:
    """msprobe's own chatter and its libraries' warnings stay out of majob's output: on a CPU it
    warns that CANN is missing, and its pandas calls raise pandas' deprecation warnings (which
    a warnings-as-errors run would turn into failures of a compare that is fine)."""
    previous = os.environ.get("MSPROBE_LOG_LEVEL")
    os.environ["MSPROBE_LOG_LEVEL"] = "3"  # errors only
    sink = io.StringIO()
    try:
        with (
            warnings.catch_warnings(),
            contextlib.redirect_stdout(sink),
            contextlib.redirect_stderr(sink),
        ):
            warnings.simplefilter("ignore")
            logging.disable(logging.WARNING)
            try:
                yield
            finally:
                logging.disable(logging.NOTSET)
    finally:
        if previous is None:
            os.environ.pop("MSPROBE_LOG_LEVEL", None)
        else:
            os.environ["MSPROBE_LOG_LEVEL"] = previous


def compare_pair(target: Path, golden: Path, output_dir: Path) -> Path:
    """Compare ``target`` (a ``dump.json``) against ``golden``: msprobe's CSV, one row per API
    input/output. Raises ``ConfigError`` when msprobe refuses the pair."""
    require_msprobe()
    output_dir.mkdir(parents=True, exist_ok=True)
    before = set(output_dir.glob("compare_result_*.csv"))
    with quiet_msprobe():
        from msprobe.pytorch.compare.pt_compare import pt_compare

        params = {"npu_path": str(target), "bench_path": str(golden)}
        try:
            pt_compare({**params, "is_print_compare_log": False}, str(output_dir))
        except Exception as error:  # msprobe raises its own CompareException with a code only
            raise ConfigError(
                f"msprobe could not compare {target} with {golden} ({type(error).__name__})",
                hint="check both files are complete dumps (a crashed run leaves partial files)",
            ) from None
    made = sorted(set(output_dir.glob("compare_result_*.csv")) - before)
    if not made:
        raise ConfigError(f"msprobe wrote no result for {target} against {golden}")
    return made[-1]


def overflow_check(step_dir: Path) -> tuple[int, str] | None:
    """What ``msprobe overflow_check -i STEP_DIR`` names: ``(rank, API)`` of the first node
    whose inputs are finite and outputs are not (msprobe follows NaN through collectives across
    ranks), the lowest rank's when it names one per rank. None when msprobe is missing, refuses
    the dump, or names nothing."""
    import json
    import tempfile

    if importlib.util.find_spec(MODULE) is None:
        return None
    with tempfile.TemporaryDirectory(prefix="majob-overflow-") as out, quiet_msprobe():
        try:
            from msprobe.overflow_check.analyzer import OverFlowCheck

            OverFlowCheck(str(step_dir), out).analyze()
            found = sorted(Path(out).glob("anomaly_analyze_*.json"))
            result = json.loads(found[-1].read_text(encoding="utf-8")) if found else {}
        except Exception:  # msprobe raises RuntimeError and its own exceptions for odd dumps
            return None
    named = [
        (int(key[5:]), str(nodes[0]["op_name"]))
        for key, nodes in result.items()
        if key.startswith("rank_") and key[5:].isdigit() and nodes and "op_name" in nodes[0]
    ]
    return min(named) if named else None
