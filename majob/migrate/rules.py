"""The rule table of ``majob check``: stable ids, default severities, and which codemod fixes what.

Ids never change meaning once released; a retired rule keeps its number. Ranges:
``MA0xx`` the file itself, ``MA1xx`` cloud paths and arguments, ``MA2xx`` distributed training,
``MA3xx`` the Ascend NPU target (only checked with ``--target npu``), ``MA4xx`` resuming after
a restart (fault tolerance).
"""

from __future__ import annotations

from majob.migrate.rule_kinds import Codemod, Rule, Severity, Target
from majob.migrate.rules_npu_table import NPU_RULES
from majob.migrate.rules_resume_table import RESUME_RULES

_W, _E = Severity.WARNING, Severity.ERROR
_PATHS, _DDP = (Codemod.CLOUD_PATHS,), (Codemod.DDP,)
__all__ = ["RULES", "Codemod", "Rule", "Severity", "Target", "rule_severity"]

RULES: dict[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(
            "MA000",
            "unparsable-file",
            _E,
            "this part of the file cannot be parsed",
            "fix the syntax error (or the encoding): the lines it covers are not checked",
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
        Rule(
            "MA107",
            "rejects-platform-arguments",
            _E,
            "this argument handling rejects the --data_url/--train_url (and --init_method, --rank, "
            "--world_size) arguments ModelArts adds: the job fails at start",
            "let it ignore or declare them (a configurator needs data_url/train_url globals; "
            "HfArgumentParser: return_remaining_strings=True; LightningCLI: pass args= without "
            "them; hydra.main: move them out of sys.argv before it runs, or use Hydra's compose "
            "API)",
            _PATHS,
        ),
        Rule(
            "MA108",
            "hub-model-id",
            _W,
            "a Hugging Face hub id: ModelArts training containers usually cannot reach the "
            "Hugging Face hub, so the model must be put in OBS and read from an input (data_url)",
            "download the model (huggingface-cli download <id> --local-dir <id>), upload that "
            "folder into the job's data_url in OBS and load it from there (a flag's default: "
            "cloud-paths makes it read from args.data_url)",
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
            "pass init_method=args.init_method (the tcp://host:port ModelArts gives each node) "
            "and set MASTER_ADDR/MASTER_PORT only when it is missing (a single-node run)",
        ),
        Rule(
            "MA208",
            "hard-coded-tcp-address",
            _W,
            "a hard-coded tcp:// rendezvous address breaks on a cluster",
            "use the --init_method the platform passes (a flag default gets that spelling)",
            _PATHS,
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
        Rule(
            "MA211",
            "needs-launcher",
            _W,
            "this expects a launcher (torchrun, accelerate launch): ModelArts starts the boot file "
            "with plain python, one process per node",
            "start the boot file with the launcher (a custom boot command; on the Ascend engine "
            "MA_RUN_METHOD=torchrun), or read os.environ.get(name, default) and the --rank/"
            "--world_size arguments ModelArts passes",
        ),
        Rule(
            "MA212",
            "data-parallel-throughput",
            _W,
            "DataParallel used every device of the node in one process; the DDP it becomes uses "
            "one device per process: one process per node trains on one device",
            "start one process per device (torchrun --nproc_per_node, or MA_RUN_METHOD=torchrun on "
            "the Ascend engine) to keep the throughput",
        ),
        *NPU_RULES,
        *RESUME_RULES,
    )
}

# Severity raised for the NPU target: DataParallel does not exist there at all.
NPU_SEVERITY = {"MA201": Severity.ERROR}


def rule_severity(rule_id: str, target: Target) -> Severity:
    """The severity of ``rule_id`` for ``target``."""
    if target is Target.NPU and rule_id in NPU_SEVERITY:
        return NPU_SEVERITY[rule_id]
    return RULES[rule_id].severity
