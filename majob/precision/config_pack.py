"""The node half of the configuration check: what went into a ``--dump`` run, written once, at
the first module call, as ``config-rank<R>.json`` in the dump dir (next to ``run-spec.json``).

Standard library only at import, and no import of ``majob``, like ``bootstrap.py`` (which
loads this file from beside itself, here and on ModelArts, where both travel with the code).
msprobe and torch are read from ``sys.modules`` (the bootstrap has imported them by then).

What it holds (``docs/precision.md`` says where each row of ``majob compare`` comes from):

- ``env``: the variables that change numerics or collectives (``ENV_PREFIXES``); a value whose
  name or shape looks like a credential is ``***`` (``masked``);
- ``packages``: every installed distribution and its version (msprobe's ``pip`` check);
- ``hyperparameters``: the script's ``--name=value`` arguments, paths and rendezvous left out;
- ``inputs``: a digest per input path argument, sampled (``DATA_RULE``);
- ``code``: a digest of the boot file's directory (``CODE_RULE``);
- ``seeds``: majob's seed, torch's initial seed, digests of the python, numpy and torch
  generator states at the first forward, and torch's deterministic-algorithms flag;
- ``weights``: a digest of the model's state (``WEIGHTS_RULE``);
- ``msprobe``: msprobe's own ``config_check`` features (max, min, mean, norm) of the weights and
  of the first batch (``collect_weights_data``, ``parse_args_and_kargs``), computed before the
  dump starts so they are not dumped themselves.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = "majob-config-pack"
VERSION = 1
PACK_NAME = "config-rank{rank}.json"
MASK = "***"
ENV_PREFIXES = (
    "ASCEND_", "HCCL_", "NCCL_", "CUDA_", "CUBLAS_", "CUDNN_", "TORCH_", "PYTORCH_", "NPU_",
    "OMP_", "MKL_", "KMP_", "PYTHONHASHSEED", "TASK_QUEUE_ENABLE", "INF_NAN_MODE_ENABLE",
    "COMBINED_ENABLE", "MA_NUM_", "WORLD_SIZE",
)  # fmt: skip
_SECRET_NAME = re.compile(
    r"SECRET|TOKEN|PASSW|CREDENTIAL|PRIVATE|SIGNATURE|COOKIE|SESSION|AUTH|API_?KEY|ACCESS_?KEY"
    r"|(^|_)(AK|SK)$",
    re.IGNORECASE,
)
_SECRET_VALUE = re.compile(r"^(eyJ[\w-]+\.[\w-]+|[A-Za-z0-9+/=_-]{32,}|[A-Z0-9]{20})$")
SKIPPED_ARGS = ("init_method", "rank", "local_rank")
SKIPPED_DIRS = ("__pycache__", "majob_precision")  # the latter: what `submit --dump` stages
DATA_RULE = (
    "per file (sorted, at most 10000): its path and size, and its bytes when <= 2 MiB, else its "
    "first and last MiB; at most 64 MiB read in all, the rest by path and size only"
)
CODE_RULE = "the boot file's directory as DATA_RULE; dot-dirs, __pycache__, majob_precision out"
WEIGHTS_RULE = "name, shape, dtype and bytes of each tensor in state_dict, at most 256 MiB of bytes"
MAX_FILES = 10_000
WHOLE_FILE = 2 << 20
SAMPLE = 1 << 20
READ_BUDGET = 64 << 20
WEIGHT_BUDGET = 256 << 20


def masked(name: str, value: str) -> str:
    """``value``, or ``***`` when ``name`` or the value itself looks like a credential."""
    if _SECRET_NAME.search(name) or _SECRET_VALUE.match(value.strip()):
        return MASK
    return value


def collect(config: dict[str, Any], model: Any, args: Any, kwargs: Any, rank: str) -> None:
    """Write ``config-rank<rank>.json`` into the dump dir; never breaks the script."""
    dump_dir = config["dump_path"]
    try:
        pack = build(config, model, args, kwargs)
    except Exception as error:  # the configuration check is worth less than the training
        pack = {"format": FORMAT, "version": VERSION, "error": f"{type(error).__name__}: {error}"}
    os.makedirs(dump_dir, exist_ok=True)
    with open(os.path.join(dump_dir, PACK_NAME.format(rank=rank)), "w", encoding="utf-8") as out:
        json.dump(pack, out, indent=1, sort_keys=True, default=str)


def build(config: dict[str, Any], model: Any, args: Any, kwargs: Any) -> dict[str, Any]:
    packages = _packages()
    hyper, paths = _arguments(sys.argv[1:])
    skip = os.path.dirname(os.path.abspath(config["dump_path"]))
    return {
        "format": FORMAT,
        "version": VERSION,
        "majob": config.get("majob_version") or packages.get("majob"),
        "msprobe": packages.get("mindstudio-probe"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "env": {k: masked(k, v) for k, v in sorted(os.environ.items()) if _kept(k)},
        "packages": packages,
        "hyperparameters": hyper,
        "inputs": {
            name: tree_digest(path)
            for name, path in paths.items()
            if not (skip + os.sep).startswith(os.path.abspath(path) + os.sep)
        },
        "code": tree_digest(os.path.dirname(os.path.abspath(sys.argv[0] or "."))),
        "seeds": _seeds(config),
        "weights": _weights(model),
        "msprobe_check": _msprobe_features(model, args, kwargs),
        "rules": {"data": DATA_RULE, "code": CODE_RULE, "weights": WEIGHTS_RULE},
    }


def _kept(name: str) -> bool:
    return name.startswith(ENV_PREFIXES)


def _packages() -> dict[str, str]:
    try:
        from importlib import metadata
    except ImportError:  # Python 3.7 (older ModelArts images): no package list
        return {}
    found: dict[str, str] = {}
    for dist in metadata.distributions():
        name = getattr(dist, "name", None) or dist.metadata["Name"]  # .name: Python 3.10
        if name:
            found[name.lower().replace("_", "-")] = dist.version
    return dict(sorted(found.items()))


def _arguments(argv: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """``--name=value`` / ``--name value`` / ``--flag`` as hyperparameters (masked); values that
    are existing paths apart (the inputs and outputs, digested, not compared as text)."""
    hyper: dict[str, str] = {}
    paths: dict[str, str] = {}
    index = 0
    while index < len(argv):
        item = argv[index]
        index += 1
        if not item.startswith("--"):
            continue
        name, sep, value = item[2:].partition("=")
        if not sep:
            following = argv[index] if index < len(argv) else "--"
            value = "true" if following.startswith("--") else following
            index += 0 if following.startswith("--") else 1
        if name in SKIPPED_ARGS:
            continue
        if value.startswith(("/", "./")) or os.path.exists(value):
            paths[name] = value
        else:
            hyper[name] = masked(name, value)
    return hyper, paths


def tree_digest(root: str) -> dict[str, Any]:
    """A bounded digest of a file or directory (``DATA_RULE``)."""
    files = _listing(root)
    digest = hashlib.sha256()
    budget = READ_BUDGET
    total = 0
    for rel, full, size in files[:MAX_FILES]:
        total += size
        digest.update(f"{rel}\0{size}\0".encode())
        if budget > 0:
            budget -= _hash_content(digest, full, size)
    total += sum(size for _, _, size in files[MAX_FILES:])
    return {
        "digest": digest.hexdigest()[:16],
        "files": len(files),
        "bytes": total,
        "sampled": len(files) > MAX_FILES or budget <= 0 or any(s > WHOLE_FILE for *_, s in files),
    }


def _listing(root: str) -> list[tuple[str, str, int]]:
    if os.path.isfile(root):
        return [(os.path.basename(root), root, os.path.getsize(root))]
    found: list[tuple[str, str, int]] = []
    for here, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in names:
            full = os.path.join(here, name)
            try:
                found.append((os.path.relpath(full, root), full, os.path.getsize(full)))
            except OSError:
                continue
        if len(found) > 10 * MAX_FILES:
            break
    return sorted(found)


def _hash_content(digest: Any, path: str, size: int) -> int:
    try:
        with open(path, "rb") as handle:
            if size <= WHOLE_FILE:
                digest.update(handle.read())
                return size
            digest.update(handle.read(SAMPLE))
            handle.seek(size - SAMPLE)
            digest.update(handle.read(SAMPLE))
            return 2 * SAMPLE
    except OSError:
        return 0


def _seeds(config: dict[str, Any]) -> dict[str, Any]:
    import random

    seeds: dict[str, Any] = {"majob_seed": config.get("seed")}
    seeds["deterministic_mode"] = bool(config.get("deterministic", False))  # dropout p=0 too
    seeds["python_state"] = _short(repr(random.getstate()).encode())
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        seeds["numpy_state"] = _short(repr(numpy.random.get_state()).encode())
    torch = sys.modules.get("torch")
    if torch is not None:
        seeds["torch_initial_seed"] = int(torch.initial_seed())
        seeds["torch_state"] = _short(bytes(torch.get_rng_state().numpy().tobytes()))
        seeds["deterministic_algorithms"] = bool(torch.are_deterministic_algorithms_enabled())
    return seeds


def _short(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _weights(model: Any) -> dict[str, Any]:
    import torch

    digest = hashlib.sha256()
    budget = WEIGHT_BUDGET
    count = 0
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            count += 1
            digest.update(f"{name}\0{tuple(tensor.shape)}\0{tensor.dtype}\0".encode())
            if budget > 0 and tensor.numel():
                flat = tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8)
                digest.update(flat[:budget].numpy().tobytes())
                budget -= int(flat.numel())
    return {"digest": digest.hexdigest()[:16], "tensors": count, "sampled": budget < 0}


def _msprobe_features(model: Any, args: Any, kwargs: Any) -> dict[str, Any]:
    """msprobe's own collectors (``msprobe.core.config_check``), on CPU as on the NPU."""
    try:
        import torch
        from msprobe.core.config_check.checkers.dataset_checker import parse_args_and_kargs
        from msprobe.core.config_check.checkers.weights_checker import collect_weights_data

        with torch.no_grad():  # .item() of a parameter that requires grad warns
            return {
                "weights": collect_weights_data(model),
                "dataset": parse_args_and_kargs(args, kwargs),
            }
    except Exception as error:  # an older or newer msprobe without them
        return {"error": f"{type(error).__name__}: {error}"}
