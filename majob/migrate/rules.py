"""The rule table of ``majob check``: stable ids, default severities, and which codemod fixes what.

Ids never change meaning once released; a retired rule keeps its number. Ranges:
``MA0xx`` the file itself, ``MA1xx`` cloud paths and arguments, ``MA2xx`` distributed training,
``MA3xx`` the Ascend NPU target (only checked with ``--target npu``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(enum.IntEnum):
    """How bad a finding is; ordered so that ``--fail-on`` can compare."""

    NOTE = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r}: use note, warning or error") from None


class Codemod(str, enum.Enum):
    """The rewrites ``majob migrate --to`` offers."""

    CLOUD_PATHS = "cloud-paths"
    DDP = "ddp"
    NPU_AUTO = "npu-auto"
    NPU_MANUAL = "npu-manual"


class Target(str, enum.Enum):
    """The hardware the checked code should run on."""

    GPU = "gpu"
    NPU = "npu"


@dataclass(frozen=True)
class Rule:
    """One check: its id, a short name, the default severity, a fix hint, the codemods fixing it."""

    id: str
    name: str
    severity: Severity
    summary: str
    hint: str
    fixed_by: tuple[Codemod, ...] = ()
    npu_only: bool = False


_W, _E, _N = Severity.WARNING, Severity.ERROR, Severity.NOTE
_PATHS, _DDP = (Codemod.CLOUD_PATHS,), (Codemod.DDP,)
_NPU_BOTH = (Codemod.NPU_AUTO, Codemod.NPU_MANUAL)
_NPU_MANUAL = (Codemod.NPU_MANUAL,)

RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(
            "MA000",
            "unparsable-file",
            _E,
            "the file cannot be parsed; it was skipped",
            "fix the syntax error (or the encoding) so the file can be checked",
        ),
        # ---- cloud paths and arguments
        Rule(
            "MA101",
            "hard-coded-input-path",
            _W,
            "a hard-coded local input path: on ModelArts the data is under the --data_url dir",
            "read from args.data_url (the old path can stay as its default)",
            _PATHS,
        ),
        Rule(
            "MA102",
            "hard-coded-output-path",
            _W,
            "a hard-coded local output path: only the --train_url dir is uploaded to OBS",
            "write under args.train_url (the old path can stay as its default)",
            _PATHS,
        ),
        Rule(
            "MA103",
            "missing-channel-argument",
            _W,
            "the argument parser declares no --data_url/--train_url channel argument",
            "add parser.add_argument('--data_url') / ('--train_url') for the job's channels",
            _PATHS,
        ),
        Rule(
            "MA104",
            "parse-args-rejects-extra",
            _E,
            "parse_args() fails on the extra arguments ModelArts injects (unrecognized arguments)",
            "use `args, unknown = parser.parse_known_args()`",
            _PATHS,
        ),
        Rule(
            "MA105",
            "write-into-input",
            _W,
            "a write into the input (data_url) directory: it is not uploaded and may be read-only",
            "write outputs under args.train_url",
        ),
        Rule(
            "MA106",
            "platform-flag-spelling",
            _E,
            "a flag ModelArts passes is declared with dashes (--world-size): argparse does not "
            "match the --world_size the platform passes, so parse_known_args drops it",
            "declare the underscore spelling too: add_argument('--world-size', '--world_size')",
            _PATHS,
        ),
        # ---- distributed
        Rule(
            "MA201",
            "data-parallel",
            _W,
            "DataParallel is single-process and is not supported on Ascend NPUs",
            "use DistributedDataParallel with one process per device",
            _DDP,
        ),
        Rule(
            "MA202",
            "ddp-without-sampler",
            _W,
            "a shuffling DataLoader in a distributed script has no DistributedSampler: every rank "
            "trains on the whole dataset",
            "pass sampler=DistributedSampler(dataset) and shuffle only without it",
            _DDP,
        ),
        Rule(
            "MA203",
            "sampler-without-set-epoch",
            _W,
            "DistributedSampler is used but this epoch loop never calls set_epoch: every epoch "
            "sees the same order",
            "call sampler.set_epoch(epoch) at the start of each epoch",
            _DDP,
        ),
        Rule(
            "MA204",
            "every-rank-saves",
            _E,
            "every rank saves the checkpoint to the same file (corrupt or clobbered checkpoints)",
            "save on global rank 0 only: `if not dist.is_initialized() or dist.get_rank() == 0`",
            _DDP,
        ),
        Rule(
            "MA205",
            "wrapped-state-dict",
            _W,
            "saving the wrapped model's state_dict stores 'module.'-prefixed keys that a plain "
            "model cannot load",
            "save model.module.state_dict()",
            _DDP,
        ),
        Rule(
            "MA206",
            "local-rank-save",
            _W,
            "the checkpoint is saved on local_rank 0: with several nodes there is one writer "
            "per node",
            "test the global rank (dist.get_rank() == 0)",
        ),
        Rule(
            "MA207",
            "hard-coded-master-addr",
            _W,
            "MASTER_ADDR/MASTER_PORT set in code breaks on a cluster",
            "use the --init_method the platform passes (or the launcher's environment)",
        ),
        Rule(
            "MA208",
            "hard-coded-tcp-address",
            _W,
            "a hard-coded tcp:// rendezvous address breaks on a cluster",
            "use the --init_method the platform passes",
        ),
        Rule(
            "MA209",
            "cuda-visible-devices-in-code",
            _W,
            "CUDA_VISIBLE_DEVICES set in code overrides the devices the platform assigned",
            "let the platform choose the devices (on Ascend: ASCEND_RT_VISIBLE_DEVICES)",
        ),
        Rule(
            "MA210",
            "rendezvous-ignores-platform",
            _W,
            "the process group ignores what ModelArts gives each node (--init_method, --rank, "
            "--world_size): with several nodes each trains alone, or waits for RANK/WORLD_SIZE "
            "that only a launcher such as torchrun sets",
            "declare the three flags (parse_known_args) and pass init_method=args.init_method, "
            "rank=args.rank, world_size=args.world_size; or start the job with torchrun",
        ),
        # ---- Ascend NPU target: what migrates, automatically or by hand
        Rule(
            "MA301",
            "nccl-backend",
            _E,
            "the nccl backend does not exist on Ascend NPUs",
            "use backend='hccl' (npu-manual) or transfer_to_npu (npu-auto)",
            _NPU_BOTH,
            True,
        ),
        Rule(
            "MA302",
            "torch-cuda-api",
            _E,
            "a torch.cuda API call without transfer_to_npu",
            "use torch_npu.npu.<same name>",
            _NPU_BOTH,
            True,
        ),
        Rule(
            "MA303",
            "cuda-method",
            _E,
            "a .cuda() call without transfer_to_npu",
            "use .npu() (npu-manual) or transfer_to_npu (npu-auto)",
            _NPU_BOTH,
            True,
        ),
        Rule(
            "MA304",
            "cuda-device-string",
            _E,
            "a 'cuda' device string without transfer_to_npu",
            "use 'npu' (npu-manual) or transfer_to_npu (npu-auto)",
            _NPU_BOTH,
            True,
        ),
        Rule(
            "MA305",
            "missing-torch-npu-import",
            _E,
            "torch is imported but torch_npu is not: NPU devices are unknown to torch",
            "add `import torch_npu` after the first torch import",
            _NPU_BOTH,
            True,
        ),
        Rule(
            "MA306",
            "is-cuda-attribute",
            _E,
            "a .is_cuda test without transfer_to_npu",
            "use .is_npu",
            _NPU_BOTH,
            True,
        ),
        # not covered by transfer_to_npu
        Rule(
            "MA310",
            "cuda-type-compare",
            _W,
            "a comparison with 'cuda': transfer_to_npu does not patch torch.device(...).type "
            "or strings, so the test keeps seeing cuda",
            "compare with 'npu'",
            _NPU_MANUAL,
            True,
        ),
        Rule(
            "MA311",
            "cuda-only-api",
            _E,
            "a CUDA API with no Ascend mapping (nvtx, nccl, comm, jiterator, sdp toggles, ...)",
            "remove it or guard it (torch_npu.npu.mstx replaces nvtx ranges)",
            (),
            True,
        ),
        Rule(
            "MA312",
            "nccl-string-compare",
            _W,
            "a comparison with 'nccl': transfer_to_npu leaves strings alone",
            "compare with 'hccl'",
            _NPU_MANUAL,
            True,
        ),
        Rule(
            "MA313",
            "nccl-availability-test",
            _E,
            "dist.is_nccl_available() is False on Ascend, also with transfer_to_npu: the script "
            "falls back to gloo, which cannot reduce NPU tensors",
            "test dist.is_hccl_available() (torch_npu adds it to torch.distributed)",
            _NPU_MANUAL,
            True,
        ),
        # blockers: never auto-fixed
        Rule(
            "MA320",
            "custom-cuda-extension",
            _E,
            "a custom CUDA/C++ extension must be rewritten for Ascend (OpPlugin / Ascend C)",
            "port the operator, or use an existing torch_npu operator",
            (),
            True,
        ),
        Rule(
            "MA321",
            "apex-fused-kernel",
            _E,
            "apex FusedAdam / amp_C kernels have no automatic Ascend migration",
            "use torch.optim.AdamW (or torch_npu's NpuFused* optimizers); remove amp_C",
            (),
            True,
        ),
        Rule(
            "MA327",
            "apex",
            _E,
            "apex (amp, parallel.DistributedDataParallel, fused kernels) has no Ascend build",
            "use torch.autocast(device_type='npu') and torch_npu.npu.amp.GradScaler for apex amp, "
            "torch.nn.parallel.DistributedDataParallel for apex DDP, torch.optim for fused "
            "optimizers",
            (),
            True,
        ),
        Rule(
            "MA322",
            "triton-kernel",
            _E,
            "Triton kernels do not run on Ascend NPUs",
            "replace the kernel with torch / torch_npu operators",
            (),
            True,
        ),
        Rule(
            "MA323",
            "cuda-python-library",
            _E,
            "cupy / numba.cuda / pycuda have no Ascend backend",
            "replace with torch / numpy code",
            (),
            True,
        ),
        Rule(
            "MA324",
            "jit-script",
            _W,
            "torch.jit.script is disabled (identity) by transfer_to_npu",
            "drop the jit.script call or expect eager execution",
            (),
            True,
        ),
        Rule(
            "MA325",
            "channels-last",
            _W,
            "channels_last memory format is not supported on Ascend",
            "use contiguous tensors (drop memory_format=torch.channels_last)",
            (),
            True,
        ),
        Rule(
            "MA326",
            "fp64-on-device",
            _W,
            "float64 is not supported on the NPU (transfer_to_npu maps DoubleTensor to float32)",
            "use float32 on the device",
            (),
            True,
        ),
    )
}

# Severity raised for the NPU target: DataParallel does not exist there at all.
NPU_SEVERITY = {"MA201": Severity.ERROR}


def rule_severity(rule_id: str, target: Target) -> Severity:
    """The severity of ``rule_id`` for ``target``."""
    if target is Target.NPU and rule_id in NPU_SEVERITY:
        return NPU_SEVERITY[rule_id]
    return RULES[rule_id].severity
