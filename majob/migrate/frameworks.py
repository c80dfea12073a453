"""What the checker knows of the training frameworks beside plain PyTorch: where PyTorch
Lightning, Hugging Face transformers/datasets/accelerate write and read, and which of their entry
points reject the arguments ModelArts adds. Qualified names as ``patterns`` has them."""

from __future__ import annotations

import re

from majob.migrate.patterns import PathArg, looks_like_data_file

_LIGHTNING = ("pytorch_lightning", "lightning.pytorch", "lightning")


def _lightning(*names: str) -> list[str]:
    return [f"{package}.{name}" for package in _LIGHTNING for name in names]


# Calls that take paths in several places: each is a path site when given a literal.
PATH_ARGUMENTS: dict[str, tuple[PathArg, ...]] = {
    **{
        name: (PathArg(0, "dirpath", "output", True),)
        for name in _lightning("callbacks.ModelCheckpoint", "ModelCheckpoint")
    },
    **{
        name: (PathArg(0, "save_dir", "output", True),)
        for name in _lightning(
            "loggers.TensorBoardLogger", "loggers.CSVLogger", "loggers.WandbLogger"
        )
    },
    **{
        name: (PathArg(-1, "default_root_dir", "output", True),)
        for name in _lightning("Trainer", "trainer.Trainer")
    },
    "transformers.TrainingArguments": (
        PathArg(0, "output_dir", "output", True),
        PathArg(-1, "logging_dir", "output", True),
    ),
    "transformers.Seq2SeqTrainingArguments": (
        PathArg(0, "output_dir", "output", True),
        PathArg(-1, "logging_dir", "output", True),
    ),
    "datasets.load_dataset": (
        PathArg(-1, "data_files", "input", False),
        PathArg(-1, "data_dir", "input", True),
    ),
    "datasets.load_from_disk": (PathArg(0, "dataset_path", "input", True),),
    # image and model files written by the example scripts of GANs, VAEs, style transfer
    "torchvision.utils.save_image": (PathArg(1, "fp", "output", False),),
    "torch.onnx.export": (PathArg(2, "f", "output", False),),
    "imageio.imwrite": (PathArg(0, "uri", "output", False),),
    "imageio.imread": (PathArg(0, "uri", "input", False),),
}

# Methods distinctive enough to know by name, whatever the receiver.
PATH_METHODS: dict[str, PathArg] = {
    "save_pretrained": PathArg(0, "save_directory", "output", True),
    "save_state": PathArg(0, "output_dir", "output", True),  # accelerate
    "load_state": PathArg(0, "input_dir", "input", True),
    "save_model": PathArg(0, "output_dir", "output", True),  # transformers.Trainer
    "save_to_disk": PathArg(0, "dataset_path", "output", True),
}
# Methods known by name only on an object built by one of these calls (trainer.save_checkpoint).
OBJECT_METHODS: dict[str, dict[str, PathArg]] = {
    **{
        name: {"save_checkpoint": PathArg(0, "filepath", "output", False)}
        for name in _lightning("Trainer", "trainer.Trainer")
    },
    "accelerate.Accelerator": {"save": PathArg(1, "f", "output", False)},
}

# A Trainer without default_root_dir and a ModelCheckpoint without dirpath write here.
LIGHTNING_TRAINERS = frozenset(_lightning("Trainer", "trainer.Trainer"))
LIGHTNING_CHECKPOINTS = frozenset(_lightning("callbacks.ModelCheckpoint", "ModelCheckpoint"))
LIGHTNING_DEFAULT_DIR = "./lightning_logs"

# Entry points that parse sys.argv and fail on an argument they do not know.
REJECTING_CALLS: dict[str, str] = {
    **{
        name: "LightningCLI parses sys.argv and rejects arguments it does not know"
        for name in _lightning("cli.LightningCLI", "utilities.cli.LightningCLI", "LightningCLI")
    },
    "fire.Fire": "fire rejects flags its function does not take",
    "jsonargparse.CLI": "jsonargparse rejects arguments it does not know",
    # Hydra's own parser takes key=value overrides and its few flags: --data_url=... fails it
    "hydra.main": "hydra.main parses sys.argv, where a --flag it does not know is an error "
    "(overrides are key=value)",
}
HF_PARSE = "parse_args_into_dataclasses"  # raises unless return_remaining_strings=True
# HfArgumentParser((ModelArguments, ...)): each field of those dataclasses is a --flag
HF_ARGUMENT_PARSER = "transformers.HfArgumentParser"

# Launch-only set-ups: under plain python each node trains alone.
LAUNCHED_CALLS: dict[str, str] = {
    "accelerate.Accelerator": "accelerate's Accelerator without `accelerate launch`: each node "
    "trains alone",
}
# Variables only a launcher (torchrun, accelerate launch) sets: os.environ[...] raises KeyError.
LAUNCHER_ENV = frozenset({"LOCAL_RANK", "RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"})
# Words of a test or name that shows the code below runs only when launched (`if ddp:`).
LAUNCHED_WORDS = ("environ", "ddp", "distributed", "rank", "world", "launch", "local")

TORCH_COMPILE = "torch.compile"

# A bare integer device: .to(local_rank), .to(self.gpu_id), .to(0).
INTEGER_DEVICE_NAMES = frozenset(
    {"local_rank", "rank", "gpu", "gpu_id", "device_id", "local_gpu", "gpu_idx", "ddp_local_rank"}
)


# Every qualified call this module knows: the pass asks the tables only for these.
KNOWN_CALLS = frozenset(
    {*PATH_ARGUMENTS, *OBJECT_METHODS, *REJECTING_CALLS, *LAUNCHED_CALLS, TORCH_COMPILE}
    | {HF_ARGUMENT_PARSER}
)


# Every method name this module knows, whatever the receiver (the pass asks only for these).
KNOWN_METHODS = frozenset(
    {*PATH_METHODS, "from_pretrained", HF_PARSE, "to"}
    | {name for methods in OBJECT_METHODS.values() for name in methods}
)


def explicit_local_path(value: str) -> bool:
    """``./model``, ``../x``, ``/data/x``: a path, not a hub id such as ``bert-base-uncased``."""
    return value.startswith(("./", "../", "/", "~/"))


# A Hugging Face hub id: ``bert-base-uncased``, ``gpt2``, ``facebook/opt-125m``.
_HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*)?")
# argparse dests that name a model to load, as the Hugging Face examples spell them
# (--model_name_or_path, --tokenizer_name, --config_name, --pretrained_model_name_or_path).
_MODEL_ARGUMENT = re.compile(r"(?:model|tokenizer|config)_(?:name|id)(?:_or_path)?$")


def hub_id(value: str) -> bool:
    """``value`` reads as a hub id, not a local path (no ``./``, no file extension, no ``..``)."""
    return (
        _HUB_ID.fullmatch(value) is not None
        and not explicit_local_path(value)
        and not looks_like_data_file(value)
        and ".." not in value
    )


# Models the hub still serves under their pre-organisation names (bert-base-uncased, gpt2, t5-small)
_CANONICAL_MODEL = re.compile(
    r"(?:bert|roberta|distilbert|distilroberta|gpt2|distilgpt2|openai-gpt|t5|albert|xlnet|xlm"
    r"|xlm-roberta|bart|camembert|flaubert|electra|deberta|longformer)(?:[-.\d][\w.-]*)?",
    re.IGNORECASE,
)
# First segments that name a local folder, not a hub organisation (output/best, runs/bert)
_LOCAL_FOLDER = re.compile(
    r"(?:outputs?|out|checkpoints?|ckpts?|runs?|models?|saved?\w*|results?|logs?|exp\w*|data\w*"
    r"|weights?|cache|tmp|pretrained\w*)",
    re.IGNORECASE,
)


def literal_hub_id(value: str) -> bool:
    """A string given to ``from_pretrained`` that reads as a hub model, not a saved folder:
    ``org/name`` under an organisation that is no local folder's name, or a canonical model's
    name. A bare ``"model"`` or ``"output/best"`` is what the script saved itself."""
    if not hub_id(value):
        return False
    if "/" in value:
        return _LOCAL_FOLDER.fullmatch(value.split("/", 1)[0]) is None
    return _CANONICAL_MODEL.fullmatch(value) is not None


def model_argument(dest: str, pretrained_sources: set[str]) -> bool:
    """An argparse dest that names the model a script loads: by the Hugging Face examples'
    spelling, or because ``from_pretrained(args.<dest>)`` loads it."""
    return bool(_MODEL_ARGUMENT.search(dest.lower())) or dest in pretrained_sources
