"""Lint a Dockerfile against the ModelArts image rules of the migration guide.

The Dockerfile is read by ``majob.image.dockerfile``; what a RUN installs is told by
``majob.image.install_steps``.

Rules, checked on the final stage (what the image holds); each finding names its line:

======================  ====================================================================
``code-or-data-copied`` COPY/ADD of anything but a requirements/environment/lock file
``layer-order``         a step installs something that changes less often than a step before
                        it (order: OS, CUDA, Python, PyTorch, other packages)
``separate-run``        two RUNs in a row doing one kind of step (two layers where one does)
``package-cache``       apt/yum/apk/pip/conda caches left in the layer
``conda-create``        an extra conda environment (the boot command cannot activate it)
``user``                no USER, or a USER other than uid 1000 (ma-user, gid 100)
``pythonunbuffered``    no ``ENV PYTHONUNBUFFERED=1`` (logs arrive late or are lost)
======================  ====================================================================
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from majob.errors import UserInputError
from majob.image.dockerfile import Instruction, parse_dockerfile
from majob.image.install_steps import CONDA_INSTALL, INSTALLER, PIP_INSTALL, Step, steps_of

ALLOWED_COPIES = re.compile(
    r"^(.*requirements.*\.txt|constraints.*\.txt|environment.*\.ya?ml|.*\.lock|pipfile(\.lock)?"
    r"|pyproject\.toml|conda-linux-64\.lock)$",
    re.IGNORECASE,
)
_DATA_SUFFIX = re.compile(
    r"\.(csv|tsv|json|jsonl|parquet|npy|npz|pt|pth|ckpt|safetensors|bin|h5|tfrecord|zip|tar|gz"
    r"|tgz|jpg|jpeg|png|txt)$",
    re.IGNORECASE,
)
MA_USERS = frozenset({"1000", "1000:100", "ma-user", "ma-user:100", "ma-user:ma-group"})


@dataclass(frozen=True, order=True)
class LintFinding:
    line: int
    rule: str
    message: str

    def render(self, path: str) -> str:
        return f"{path}:{self.line}: {self.rule}: {self.message}"


def lint_dockerfile(text: str, path: str = "Dockerfile") -> list[LintFinding]:
    """Every rule's findings for the Dockerfile ``text``, by line."""
    instructions = parse_dockerfile(text, path)
    start = max(i for i, ins in enumerate(instructions) if ins.name == "FROM")
    final = instructions[start:]
    findings: list[LintFinding] = []
    findings += _copies(final)
    findings += _order_and_merges(final)
    findings += _caches(final)
    findings += _conda_create(final)
    findings += _user(final)
    findings += _unbuffered(final)
    return sorted(findings)


def lint_file(path: str | Path) -> list[LintFinding]:
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise UserInputError(f"{file}: cannot read the Dockerfile ({error})") from None
    return lint_dockerfile(text, str(file))


def _flags_and_args(value: str) -> tuple[list[str], list[str]]:
    try:
        words = shlex.split(value)
    except ValueError:
        words = value.split()
    if value.lstrip().startswith("["):
        words = re.findall(r'"((?:[^"\\]|\\.)*)"', value)
    flags = [w for w in words if w.startswith("--")]
    return flags, [w for w in words if not w.startswith("--")]


def _copies(final: list[Instruction]) -> list[LintFinding]:
    findings = []
    for ins in final:
        if ins.name not in ("COPY", "ADD"):
            continue
        flags, args = _flags_and_args(ins.value)
        if any(f.startswith("--from") for f in flags):
            continue  # from another build stage or image, not from the build context
        for source in args[:-1]:
            name = source.rstrip("/").rsplit("/", 1)[-1]
            if ALLOWED_COPIES.match(name):
                continue
            what = "data" if _DATA_SUFFIX.search(name) and "requirements" not in name else "code"
            findings.append(
                LintFinding(
                    ins.line,
                    "code-or-data-copied",
                    f"{ins.name} {source} puts {what} in the image: ModelArts downloads the code "
                    "from OBS at start and reads data from OBS inputs; the image should change "
                    "only when the environment does",
                )
            )
    return findings


def _order_and_merges(final: list[Instruction]) -> list[LintFinding]:
    findings = []
    latest: tuple[Step, int] | None = None  # the latest-changing step so far, and its line
    previous_run: tuple[set[Step], int] | None = None
    for ins in final:
        if ins.name != "RUN":
            previous_run = None
            continue
        steps = steps_of(ins.value)
        if steps and latest is not None and min(steps) < latest[0]:
            findings.append(
                LintFinding(
                    ins.line,
                    "layer-order",
                    f"installs {min(steps).label} after {latest[0].label} (line {latest[1]}): "
                    "put rarely changing layers first (OS, CUDA, Python, PyTorch, other "
                    "packages) so a change rebuilds only the layers after it",
                )
            )
        lone_update = re.search(rf"\b{INSTALLER}\s+update\b", ins.value) and not re.search(
            rf"\b{INSTALLER}\s+(?:-\S+\s+)*(?:install|add)\b", ins.value
        )
        if (
            previous_run is not None
            and steps
            and previous_run[0]
            and max(steps) == max(previous_run[0])
        ):
            findings.append(
                LintFinding(
                    ins.line,
                    "separate-run",
                    f"the RUN at line {previous_run[1]} does the same kind of step: join them "
                    "with && in one RUN (one layer, and no stale package index)",
                )
            )
        elif lone_update:
            findings.append(
                LintFinding(
                    ins.line,
                    "separate-run",
                    "a package index update alone in a RUN goes stale in the cache: run it in "
                    "the same RUN as the install",
                )
            )
        if steps and (latest is None or max(steps) >= latest[0]):
            latest = (max(steps), ins.line)
        previous_run = (steps, ins.line)
    return findings


_CACHE_RULES: tuple[tuple[re.Pattern[str], re.Pattern[str], str], ...] = (
    (
        re.compile(r"\b(?:apt-get|apt)\s+(?:-\S+\s+)*install\b"),
        re.compile(r"rm\s+-r?f?r?\s+[^;&|]*/var/lib/apt/lists"),
        "apt lists left in the layer: end the RUN with && rm -rf /var/lib/apt/lists/*",
    ),
    (
        re.compile(r"\b(?:yum|dnf|microdnf)\s+(?:-\S+\s+)*install\b"),
        re.compile(r"\b(?:yum|dnf|microdnf)\s+clean\s+all|rm\s+-\S*\s+/var/cache/(?:yum|dnf)"),
        "yum/dnf cache left in the layer: end the RUN with && yum clean all",
    ),
    (
        re.compile(r"\bapk\s+(?:-\S+\s+)*add\b"),
        re.compile(r"--no-cache\b"),
        "apk cache left in the layer: use apk add --no-cache",
    ),
    (
        re.compile(rf"\b{PIP_INSTALL}\b"),
        re.compile(r"--no-cache-dir\b|\bpip3?\s+cache\s+purge|rm\s+-\S*\s+\S*\.cache/pip"),
        "pip cache left in the layer: add --no-cache-dir (or ENV PIP_NO_CACHE_DIR=1)",
    ),
    (
        re.compile(rf"\b{CONDA_INSTALL}\b"),
        re.compile(r"\b(?:conda|mamba|micromamba)\s+clean\b"),
        "conda package cache left in the layer: end the RUN with && conda clean -afy",
    ),
)


def _caches(final: list[Instruction]) -> list[LintFinding]:
    findings = []
    pip_no_cache = False
    for ins in final:
        if ins.name == "ENV" and re.search(r"\bPIP_NO_CACHE_DIR\b", ins.value):
            pip_no_cache = True
        if ins.name != "RUN":
            continue
        for installs, cleans, message in _CACHE_RULES:
            if "pip" in message and pip_no_cache:
                continue
            if installs.search(ins.value) and not cleans.search(ins.value):
                findings.append(LintFinding(ins.line, "package-cache", message))
    return findings


def _conda_create(final: list[Instruction]) -> list[LintFinding]:
    pattern = re.compile(r"\b(?:conda|mamba|micromamba)\s+(?:env\s+)?create\b")
    return [
        LintFinding(
            ins.line,
            "conda-create",
            "creates an extra conda environment: the boot command is not a login shell and "
            "cannot `conda activate` it; install into the image's one Python instead",
        )
        for ins in final
        if ins.name == "RUN" and pattern.search(ins.value)
    ]


def _user(final: list[Instruction]) -> list[LintFinding]:
    users = [ins for ins in final if ins.name == "USER"]
    if not users:
        return [
            LintFinding(
                final[0].line,
                "user",
                "no USER: ModelArts runs custom images as uid 1000 (ma-user, gid 100); add "
                "`USER ma-user` after creating it so files and permissions match at run time",
            )
        ]
    last = users[-1]
    value = last.value.strip()
    created = {
        m.group(1)
        for ins in final
        if ins.name == "RUN"
        for m in re.finditer(
            r"\buseradd\b[^;&|]*?-u\s*1000\b[^;&|]*?\s([a-z_][\w-]*)\s*(?:$|[;&|])", ins.value
        )
    }
    if value in MA_USERS or value.split(":")[0] in created:
        return []
    return [
        LintFinding(
            last.line,
            "user",
            f"USER {value}: ModelArts runs custom images as uid 1000 (ma-user, gid 100); "
            "end with USER ma-user (or USER 1000:100)",
        )
    ]


def _unbuffered(final: list[Instruction]) -> list[LintFinding]:
    for ins in final:
        if ins.name == "ENV" and re.search(r"\bPYTHONUNBUFFERED(?:=|\s+)(?!0\b)\S", ins.value):
            return []
    return [
        LintFinding(
            final[0].line,
            "pythonunbuffered",
            "no ENV PYTHONUNBUFFERED=1: Python buffers stdout in a container, so job logs "
            "arrive late and are lost when a job fails",
        )
    ]
