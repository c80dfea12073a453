"""The boot file of ``majob data stage``'s transfer job, shipped as ``majob_stage.py`` at the root
of its code folder beside a copy of the majob modules the copy engine needs (``stage_job.py``).

ModelArts passes the job's hyperparameters as ``--name=value`` arguments (and may add its own):
``--source``, ``--dest`` (the folder on the mounted volume), ``--jobs``, ``--endpoint`` and
``--region`` are read, the rest ignored. It checks first that the image has the libraries the
engine imports, then runs it (``majob.data.stage_main``) and checks that every majob module it
used is the shipped copy, not one the image happens to have.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

# (module, the distribution that provides it) the copy engine imports from the image: only the
# OBS SDK (its own dependencies come with it); the rest is the standard library.
REQUIRED = (("obs", "esdk-obs-python"),)


def main() -> int:
    missing = [dist for module, dist in REQUIRED if importlib.util.find_spec(module) is None]
    if missing:
        print(
            f"error: the image lacks {', '.join(missing)}: use an image that has them "
            "(majob data stage --image, docs/data.md)",
            file=sys.stderr,
            flush=True,
        )
        return 2
    parser = argparse.ArgumentParser(prog="majob_stage.py")
    for name in ("source", "dest", "endpoint", "region"):
        parser.add_argument(f"--{name}")
    parser.add_argument("--jobs", type=int, default=8)
    args, _ = parser.parse_known_args()
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here))
    from majob.data.stage_main import main as stage

    argv = [args.source, args.dest, "--jobs", str(args.jobs)]
    for name in ("endpoint", "region"):
        if getattr(args, name):
            argv += [f"--{name}", getattr(args, name)]
    code = stage(argv)
    foreign = sorted(
        name
        for name, module in list(sys.modules.items())
        if name.split(".")[0] == "majob"
        and getattr(module, "__file__", None)
        and not Path(module.__file__ or "").resolve().is_relative_to(here)
    )
    if foreign:
        print(f"error: not shipped with the job: {', '.join(foreign)}", file=sys.stderr)
        return code or 3
    return code


if __name__ == "__main__":
    sys.exit(main())
