"""What the checker and the codemods agree on: which calls take paths, which names are CUDA-only.

Both sides (``checker`` on the stdlib ``ast``, the codemods on libcst) resolve a callee to a
qualified name through the file's imports and then ask these tables, so a finding is marked
auto-fixable exactly when a codemod will fix it.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterable
from typing import Literal, NamedTuple

PathKind = Literal["input", "output"]


class PathArg(NamedTuple):
    """Where a call takes its path: the position (0-based) and the keyword name."""

    position: int
    keyword: str
    kind: PathKind
    is_dir: bool  # the path names a directory (a dataset root, a log dir), not a file

    def argument(self, call: ast.Call) -> ast.expr | None:
        """The path ``call`` passes here: at ``index``, else as ``keyword``; None if neither."""
        if 0 <= self.position < len(call.args):
            return call.args[self.position]
        return next((k.value for k in call.keywords if k.arg == self.keyword), None)


def _spec(
    names: Iterable[str], index: int, kw: str, kind: PathKind, is_dir: bool
) -> dict[str, PathArg]:
    return {name: PathArg(index, kw, kind, is_dir) for name in names}


_DATASETS = [
    f"torchvision.datasets.{n}"
    for n in (
        "MNIST",
        "FashionMNIST",
        "KMNIST",
        "EMNIST",
        "QMNIST",
        "CIFAR10",
        "CIFAR100",
        "ImageFolder",
        "DatasetFolder",
        "ImageNet",
        "SVHN",
        "STL10",
        "CelebA",
        "VOCDetection",
        "VOCSegmentation",
        "CocoDetection",
        "Flowers102",
        "Food101",
    )
]

# Qualified callee -> where its path goes. ``open`` is decided by its mode (see open_kind).
PATH_CALLS: dict[str, PathArg] = {
    **_spec(_DATASETS, 0, "root", "input", True),
    **_spec(["builtins.open", "io.open", "codecs.open"], 0, "file", "input", False),
    **_spec(["torch.load"], 0, "f", "input", False),
    **_spec(["torch.save"], 1, "f", "output", False),
    **_spec(["numpy.load", "numpy.fromfile", "numpy.memmap"], 0, "filename", "input", False),
    **_spec(["numpy.loadtxt", "numpy.genfromtxt"], 0, "fname", "input", False),
    **_spec(["numpy.save", "numpy.savez", "numpy.savez_compressed"], 0, "file", "output", False),
    **_spec(["numpy.savetxt"], 0, "fname", "output", False),
    **_spec(
        ["pandas.read_csv", "pandas.read_table", "pandas.read_pickle"],
        0,
        "filepath_or_buffer",
        "input",
        False,
    ),
    **_spec(["pandas.read_json"], 0, "path_or_buf", "input", False),
    **_spec(["pandas.read_parquet"], 0, "path", "input", False),
    **_spec(["pandas.read_excel"], 0, "io", "input", False),
    **_spec(["PIL.Image.open"], 0, "fp", "input", False),
    **_spec(["cv2.imread"], 0, "filename", "input", False),
    **_spec(["cv2.imwrite"], 0, "filename", "output", False),
    **_spec(["scipy.io.loadmat"], 0, "file_name", "input", False),
    **_spec(["glob.glob"], 0, "pathname", "input", False),
    **_spec(["os.listdir"], 0, "path", "input", True),
    **_spec(
        ["shutil.copyfile", "shutil.copy", "shutil.copy2", "shutil.move"], 1, "dst", "output", False
    ),
    **_spec(["shutil.copytree"], 1, "dst", "output", True),
    **_spec(["shutil.rmtree"], 0, "path", "output", True),
    **_spec(["os.makedirs", "os.mkdir"], 0, "name", "output", True),
    **_spec(["logging.FileHandler"], 0, "filename", "output", False),
    **_spec(["logging.basicConfig"], -1, "filename", "output", False),
    **_spec(["matplotlib.pyplot.savefig"], 0, "fname", "output", False),
    **_spec(
        ["torch.utils.tensorboard.SummaryWriter", "tensorboardX.SummaryWriter"],
        0,
        "log_dir",
        "output",
        True,
    ),
}

PATHLIB_CALLS = frozenset({"pathlib.Path", "pathlib.PurePath", "pathlib.PosixPath"})
# Path methods that write: the literal they were made from is an output.
PATHLIB_WRITE_METHODS = frozenset({"write_text", "write_bytes", "mkdir", "touch"})

# Calls that write under a local directory when given no path at all.
IMPLICIT_DIR_CALLS: dict[str, str] = {
    "torch.utils.tensorboard.SummaryWriter": "./runs",
    "tensorboardX.SummaryWriter": "./runs",
}

# Method names that take an output path whatever the receiver (DataFrame.to_csv, fig.savefig).
PATH_METHODS: dict[str, PathArg] = {
    **_spec(["to_csv", "to_json", "to_parquet", "to_pickle"], 0, "path_or_buf", "output", False),
    **_spec(["savefig"], 0, "fname", "output", False),
}

# Calls whose path argument takes its direction from the other uses of the same literal
# (``os.path.isdir('checkpoint')`` before ``os.mkdir('checkpoint')``); alone, they read.
NEUTRAL_PATH_CALLS: dict[str, PathArg] = {
    **_spec(["os.path.exists", "os.path.isdir", "os.path.isfile"], 0, "path", "input", False),
    **_spec(
        ["shutil.copyfile", "shutil.copy", "shutil.copy2", "shutil.move"], 0, "src", "input", False
    ),
}
# A ``mode=`` of np.memmap that writes ('w+', 'r+') makes it an output.
MEMMAP_CALLS = frozenset({"numpy.memmap"})
MKDIR_CALLS = frozenset({"os.mkdir", "os.makedirs"})
# Calls whose arguments only show a path (a log line), never use it.
DISPLAY_CALLS = frozenset({"print", "builtins.print"})
DISPLAY_METHODS = frozenset({"info", "debug", "warning", "log"})

OPEN_CALLS = frozenset({"builtins.open", "io.open", "codecs.open"})


def open_kind(mode: str | None) -> PathKind:
    """``open``'s direction from its literal mode (no mode or an unknown one reads)."""
    if mode is not None and any(c in mode for c in "wax+"):
        return "output"
    return "input"


# URLs, stdout, and the kernel's interfaces (/proc, /sys, /dev: never data or outputs)
_NOT_LOCAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|-$|/(?:proc|sys|dev)(?:/|$))", re.IGNORECASE)


def is_local_path_literal(value: str) -> bool:
    """A string that names a local file or directory (not a URL, not empty, not stdout)."""
    return bool(value.strip()) and not _NOT_LOCAL.match(value) and "\n" not in value


# ------------------------------------------------------------------ routing paths through args


class PathUse(NamedTuple):
    """One hard-coded path literal in a path position."""

    value: str
    kind: PathKind
    is_dir: bool


def _base_dir(use: PathUse) -> str:
    path = posixpath.normpath(use.value)
    if use.is_dir and not any(c in path for c in "*?["):
        return path
    parent = posixpath.dirname(path)
    while any(c in parent for c in "*?["):
        parent = posixpath.dirname(parent)
    return parent or "."


def channel_root(uses: Iterable[PathUse], declared_default: str | None = None) -> str | None:
    """The default of the channel argument: the declared one, or the common dir of the uses."""
    if declared_default is not None:
        return posixpath.normpath(declared_default)
    bases = [_base_dir(u) for u in uses]
    if not bases:
        return None
    absolute = [b for b in bases if b.startswith("/")]
    # Mixed absolute and relative paths have no common root: the majority wins, the rest stay.
    same = absolute if len(absolute) * 2 > len(bases) else [b for b in bases if b not in absolute]
    root = posixpath.commonpath(same) or "."
    return root if root.startswith(("/", ".")) else "./" + root


def relative_to_root(value: str, root: str) -> str | None:
    """``value`` relative to ``root`` ("" for the root itself), or None when it is outside it."""
    path = posixpath.normpath(value)
    root = posixpath.normpath(root)
    if path == root:
        return ""
    if root == "." and not path.startswith("/") and not path.startswith(".."):
        return path
    prefix = root if root.endswith("/") else root + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


_PATH_NAME = re.compile(r"(?:^|_)(?:FILE|FILES|DIR|DIRS|PATH|ROOT|FOLDER|DIRECTORY)(?:_|$)", re.I)
_OUTPUT_WORDS = (
    *("out", "ckpt", "checkpoint", "save", "log", "result", "export", "snapshot", "best"),
    "runs",  # tensorboard's and YOLO's runs/ directory
)
_INPUT_WORDS = ("data", "input", "dataset", "root", "train", "test", "val")


_DIR_NAME = re.compile(r"(?:^|_)(?:DIR|DIRS|ROOT|FOLDER|DIRECTORY)(?:_|$)", re.I)


def config_path_name(name: str) -> bool:
    """A config key or attribute that holds a local path: a directory (``output_dir``,
    ``DATA_ROOT``) or an upper-case config name (``CKPT_PATH``); a bare ``path=`` or ``file=``
    keyword is too often a URL route or a name."""
    return bool(_DIR_NAME.search(name)) or (name.isupper() and path_constant_name(name))


def path_constant_name(name: str) -> bool:
    """A module constant's name that says it holds a path (``DATA_DIR``, ``ckpt_path``...)."""
    return bool(_PATH_NAME.search(name))


# argparse dests that name a path even without DIR/PATH in them (--data, --resume, --out).
_PATH_ARGUMENTS = frozenset(
    {
        "data",
        "dataset",
        "data_root",
        "root",
        "out",
        "output",
        "outdir",
        "checkpoint",
        "save",
        "logdir",
        "resume",
        "pretrained",
        "weights",
    }
)
_DATA_FILE = re.compile(
    r"\.(?:pt|pth|tar|ckpt|bin|npy|npz|pkl|pickle|csv|json|jsonl|txt|h5|hdf5|safetensors"
    r"|jpg|jpeg|png|wav|mp4|parquet|onnx|model)$"
)


def path_argument_name(dest: str) -> bool:
    """An argparse dest that holds a path (``data``, ``out_dir``, ``checkpoint_path``...)."""
    return path_constant_name(dest) or dest.lower() in _PATH_ARGUMENTS


def looks_like_data_file(value: str) -> bool:
    """A literal naming a checkpoint or data file by its extension (``snapshot.pt``)."""
    return bool(_DATA_FILE.search(value)) and " " not in value


def argument_dest(option_strings: list[str], dest: str | None) -> str | None:
    """argparse's dest for ``add_argument(*option_strings, dest=dest)``: the first long flag,
    or the name of a positional argument (``add_argument("data", nargs="?")``)."""
    if dest:
        return dest
    long = [o for o in option_strings if o.startswith("--")]
    if long:
        return long[0][2:].replace("-", "_")
    if len(option_strings) == 1 and option_strings[0].isidentifier():
        return option_strings[0]
    return None


def is_code_file(value: str) -> bool:
    """A Python source file (``configurator.py``): code shipped with the script, not data."""
    return value.endswith(".py")


def device_index_name(name: str) -> bool:
    """``gpu``, ``gpu_id``, ``device_id``: a device index, i.e. the process's rank on its node."""
    lowered = name.lower()
    return lowered in ("gpu", "gpu_id", "device_id", "local_gpu", "gpu_idx")


def kind_from_name(name: str) -> PathKind | None:
    """Input or output, guessed from a constant's name (output words win: ``OUTPUT_DIR``)."""
    lowered = name.lower()
    if any(word in lowered for word in _OUTPUT_WORDS):
        return "output"
    if any(word in lowered for word in _INPUT_WORDS):
        return "input"
    return None


def looks_like_file(base_name: str) -> bool:
    """``model.pth`` yes, ``output`` and ``.cache`` no."""
    stem, dot, extension = base_name.rpartition(".")
    return bool(dot and stem and extension and "*" not in base_name)


CHANNEL_FLAGS: dict[PathKind, str] = {"input": "data_url", "output": "train_url"}
DEFAULT_ROOTS: dict[PathKind, str] = {"input": "./data", "output": "./output"}

# ------------------------------------------------------------------ distributed

DATA_PARALLEL = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel"})
DATA_PARALLEL_FUNCTION = "torch.nn.parallel.data_parallel"
DDP = frozenset(
    {
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
    }
)
INIT_PROCESS_GROUP = "torch.distributed.init_process_group"
DISTRIBUTED_SAMPLER = frozenset(
    {"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"}
)
DATA_LOADER = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
RENDEZVOUS_ENV = frozenset({"MASTER_ADDR", "MASTER_PORT"})
RANK_GUARD_WORDS = ("rank", "master", "main_process", "is_main", "is_primary")
# torch.distributed calls that are no collective: a rank may skip them.
RANK_QUERIES = frozenset(
    f"torch.distributed.{name}"
    for name in (
        *("get_rank", "get_world_size", "is_initialized", "is_available", "get_backend"),
        *("is_nccl_available", "is_gloo_available", "is_mpi_available", "is_hccl_available"),
    )
)
NCCL_AVAILABLE = "torch.distributed.is_nccl_available"
INJECTED_DIST_FLAGS = ("init_method", "rank", "world_size")
# Every flag ModelArts passes, spelled as it passes them (underscores).
PLATFORM_FLAGS = frozenset({*INJECTED_DIST_FLAGS, "data_url", "train_url"})

# ------------------------------------------------------------------ Ascend

# torch.cuda sub-APIs that torch_npu does not provide (transfer_to_npu leaves them CUDA-bound).
CUDA_ONLY = frozenset({"nvtx", "nccl", "comm", "jiterator", "memory_usage"})
CUDA_ONLY_QUALIFIED = frozenset(
    {
        "torch.autograd.profiler.emit_nvtx",
        "torch.autograd.profiler.load_nvprof",
        "torch.backends.cuda.sdp_kernel",
        "torch.backends.cuda.enable_flash_sdp",
        "torch.backends.cuda.enable_mem_efficient_sdp",
        "torch.backends.cuda.enable_math_sdp",
        "torch.backends.cuda.preferred_linalg_library",
        "torch.backends.cudnn.benchmark_limit",
    }
)
CUDA_EXTENSION = frozenset(
    {
        "torch.utils.cpp_extension.load",
        "torch.utils.cpp_extension.load_inline",
        "torch.utils.cpp_extension.CUDAExtension",
    }
)
APEX_FUSED = frozenset({"apex.optimizers.FusedAdam", "apex.optimizers.FusedLAMB"})
BLOCKER_MODULES: dict[str, str] = {
    "amp_C": "MA321",
    "apex": "MA327",
    "triton": "MA322",
    "cupy": "MA323",
    "numba.cuda": "MA323",
    "pycuda": "MA323",
}
JIT_SCRIPT = frozenset({"torch.jit.script", "torch.jit.script_method"})
FP64 = frozenset({"torch.float64", "torch.double", "torch.cuda.DoubleTensor", "torch.DoubleTensor"})
CHANNELS_LAST = "torch.channels_last"
TRANSFER_TO_NPU_MODULE = "torch_npu.contrib.transfer_to_npu"
# Libraries that import torch_npu themselves when it is installed (accelerate's
# is_npu_available() does), so a script using them needs no import of its own.
NPU_LOADING_MODULES: dict[str, str] = {"accelerate": "accelerate imports torch_npu itself"}
# torch.accelerator exists from torch 2.6, whose torch_npu loads itself (device-backend autoload)
ACCELERATOR_API = "torch.accelerator"

# 'cuda', 'cuda:N', and the formats that build one: 'cuda:{}', 'cuda:{0}', 'cuda:%d', 'cuda:'.
_CUDA_DEVICE = re.compile(r"^cuda(?::(?:\d+|\{[^{}]*\}|%[sdi]|))?$")


def is_cuda_device_string(value: str) -> bool:
    """``'cuda'``, ``'cuda:N'`` or a format/prefix that builds one (``'cuda:{}'``, ``'cuda:'``)."""
    return bool(_CUDA_DEVICE.match(value))


def npu_device_string(value: str) -> str:
    """The NPU spelling of a CUDA device string (``cuda:1`` -> ``npu:1``)."""
    return "npu" + value[4:]


def module_blocker(module: str) -> str | None:
    """The blocker rule id for importing ``module`` (or a submodule of a blocked one)."""
    for blocked, rule_id in BLOCKER_MODULES.items():
        if module == blocked or module.startswith(blocked + "."):
            return rule_id
    return None
