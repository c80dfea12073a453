"""The configuration check of ``majob compare``: what went into A and into B, as one table of the
differences, shown before any number is compared ("these differ: torch 2.1.0 vs 2.13.0; lr 0.01
vs 0.02; dataset digest differs").

Two sources, merged:

- what majob knows: the spec each side ran (``run-spec.json``, ``specs.py``: hyperparameters,
  image, flavor, nodes, ``precision.deterministic``) and the run's ``record.json`` (interpreter);
- what the node saw: the configuration pack (``config_pack.py``, ``config-rank<R>.json`` in the
  dump; the lowest rank is read): packages, numerics variables, the script's arguments, input,
  code and weight digests, seeds and generator states, msprobe's first-batch features.

A side without a pack (an older dump, a job staged by an older majob) still gets the spec's rows;
the node's rows then say "unknown", never "same". A pack that cannot be read, or one of another
pack format, is a warning: it never stops a compare.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from majob.masking import MASK
from majob.precision.config_pack import FORMAT, PACK_NAME, VERSION, masked
from majob.precision.specs import MISSING, read_spec_record, spec_differences

UNKNOWN = "(unknown)"
# msprobe's own list (config_check/resource/dependency.yaml), and the ones majob adds
KEY_PACKAGES = (
    "torch", "torch-npu", "numpy", "mindstudio-probe", "transformers", "deepspeed", "megatron",
    "datasets", "peft", "mindspore", "accelerate", "apex", "torchvision", "majob",
)  # fmt: skip
NODE_PARTS = ("packages", "env", "hyperparameters", "inputs", "code", "seeds", "weights")


@dataclass(frozen=True)
class ConfigRow:
    """One thing that differs, or that one side cannot tell."""

    what: str  # "torch", "hyperparameters.lr", "dataset --data_url"
    a: str
    b: str
    source: str  # "spec", "pack", "run record"

    @property
    def unknown(self) -> bool:
        return UNKNOWN in (self.a, self.b)

    @property
    def phrase(self) -> str:
        name = self.what.removeprefix("hyperparameters.")
        if name.endswith(" other packages"):
            return f"{name} differ (the table names them)"
        if self.a.startswith("digest ") and self.b.startswith("digest "):
            return f"{name} differs"
        return f"{name} {self.a} vs {self.b}"


@dataclass
class ConfigTable:
    """The differences between what went into A and into B, and what could not be told."""

    rows: list[ConfigRow] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # "B: no configuration pack ..."
    warnings: list[str] = field(default_factory=list)
    checked: int = 0  # items compared and found the same

    @property
    def differing(self) -> list[ConfigRow]:
        return [row for row in self.rows if not row.unknown and row.a != row.b]

    def summary(self) -> str:
        """What differs, then what is unknown, then the warnings: a line each."""
        differ = self.differing
        parts = [
            "these differ: " + "; ".join(row.phrase for row in differ)
            if differ
            else f"configuration: no difference found ({self.checked} items compared)"
        ]
        for side, index in (("A", 0), ("B", 1)):
            gaps = [r.what for r in self.rows if r.unknown and (r.a, r.b)[index] == UNKNOWN]
            if gaps:
                parts.append(f"unknown for {side}: {', '.join(gaps)}")
        parts += [f"unknown: {line}" for line in self.unknown]
        parts += [f"warning: {line}" for line in self.warnings]
        return "\n".join(parts)

    def to_json(self) -> dict[str, object]:
        return {
            "rows": [vars(row) | {"unknown": row.unknown} for row in self.rows],
            "unknown": list(self.unknown),
            "warnings": list(self.warnings),
            "checked": self.checked,
        }

    def _repr_html_(self) -> str:
        return config_section(self)


def read_pack(dump_dir: Path | None, label: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The lowest rank's pack in ``dump_dir`` and the warnings reading it gave."""
    if dump_dir is None:
        return None, []
    found = sorted(dump_dir.glob(PACK_NAME.format(rank="*")), key=_rank_of)
    if not found:
        return None, []
    path = found[0]
    try:
        pack = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        return None, [f"{label}: {path.name} cannot be read ({_short(error)}): its rows unknown"]
    if not isinstance(pack, dict) or pack.get("format") != FORMAT:
        return None, [f"{label}: {path.name} is not a majob configuration pack: rows unknown"]
    warnings = []
    if pack.get("error"):
        warnings.append(f"{label}: the node could not collect its configuration: {pack['error']}")
        return None, warnings
    if pack.get("version") != VERSION:
        warnings.append(
            f"{label}: {path.name} is pack format {pack.get('version')} (this majob reads "
            f"{VERSION}): parts it does not have are unknown"
        )
    return pack, warnings


def _rank_of(path: Path) -> tuple[int, str]:
    digits = path.stem.removeprefix("config-rank")
    return (int(digits), "") if digits.isdigit() else (1 << 30, path.name)


def _short(error: Exception) -> str:
    return str(error).splitlines()[0][:120] if str(error) else type(error).__name__


def read_record(run_dir: Path | None) -> dict[str, Any] | None:
    try:
        data = json.loads((run_dir / "record.json").read_text(encoding="utf-8"))  # type: ignore[operator]
    except (OSError, ValueError, TypeError):
        return None
    return data if isinstance(data, dict) else None


def config_table(
    dumps: tuple[Path | None, Path | None], run_dirs: tuple[Path | None, Path | None] = (None, None)
) -> ConfigTable:
    """The table for the dumps of A and B (and their run dirs, for ``record.json``)."""
    table = ConfigTable()
    specs = (read_spec_record(dumps[0]), read_spec_record(dumps[1]))
    pack_a, warn_a = read_pack(dumps[0], "A")
    pack_b, warn_b = read_pack(dumps[1], "B")
    table.warnings += warn_a + warn_b
    _spec_rows(table, specs[0], specs[1])
    _pack_rows(table, pack_a, pack_b)
    table.rows = _without_repeats(table.rows)
    records = (read_record(run_dirs[0]), read_record(run_dirs[1]))
    if records[0] is not None and records[1] is not None:
        interpreters = records[0].get("python"), records[1].get("python")
        _compare(table, "interpreter", *interpreters, "run record")
    _version_warnings(table, pack_a, pack_b)
    return table


def _spec_rows(table: ConfigTable, a: dict[str, Any] | None, b: dict[str, Any] | None) -> None:
    deterministic = (_deterministic(a), _deterministic(b))
    _compare(table, "precision.deterministic", *deterministic, "spec", always=True)
    if None not in deterministic and deterministic[0] != deterministic[1]:
        ran = "A" if deterministic[0] == "yes" else "B"
        table.warnings.append(
            f"only {ran} ran in deterministic mode (dropout p=0): the other's dropout draws its "
            "own masks, so their numbers can differ for that alone; set precision.deterministic "
            "the same in both"
        )
    if a is None or b is None:
        side = "A" if a is None else "B"
        table.unknown.append(f"{side}: its dump has no run-spec.json (made by an older majob)")
        return
    for what, value_a, value_b in spec_differences(a, b):
        if what != "precision.deterministic":
            table.rows.append(ConfigRow(what, value_a, value_b, "spec"))
    table.checked += 1


def _without_repeats(rows: list[ConfigRow]) -> list[ConfigRow]:
    """A hyperparameter the specs already show is not shown again as the node's argument."""
    in_spec = {r.what.removeprefix("hyperparameters.") for r in rows if r.source == "spec"}
    return [r for r in rows if not (r.source == "pack" and r.what.removeprefix("--") in in_spec)]


def _deterministic(spec: dict[str, Any] | None) -> str | None:
    """``precision.deterministic`` of a run's spec: absent means false."""
    if spec is None:
        return None
    precision = spec.get("precision")
    value = precision.get("deterministic", False) if isinstance(precision, dict) else False
    return "yes" if value is True else "no" if not value else str(value)


def _compare(
    table: ConfigTable, what: str, a: Any, b: Any, source: str, *, always: bool = False
) -> None:
    """A row when ``a`` and ``b`` differ or one is unknown (None); ``always``: a row even when
    they agree (the deterministic row: which mode each side ran matters either way)."""
    shown_a, shown_b = _shown(a), _shown(b)
    if a is None or b is None or a != b or always:
        table.rows.append(ConfigRow(what, shown_a, shown_b, source))
    if a is not None and b is not None and a == b:
        table.checked += 1


def _shown(value: Any) -> str:
    if value is None:
        return UNKNOWN
    if isinstance(value, dict) and "digest" in value:
        return f"digest {value['digest']} ({value.get('files', value.get('tensors', '?'))})"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _pack_rows(table: ConfigTable, a: dict[str, Any] | None, b: dict[str, Any] | None) -> None:
    if a is None or b is None:
        sides = " and ".join(side for side, pack in (("A", a), ("B", b)) if pack is None)
        table.unknown.append(
            f"{sides}: no configuration pack (config-rank<R>.json): packages, environment, "
            "arguments, data, code, weight digests and seeds not compared"
        )
        return
    _compare(table, "python", a.get("python"), b.get("python"), "pack")
    _package_rows(table, a.get("packages") or {}, b.get("packages") or {})
    for part, label in (("env", "env "), ("hyperparameters", "--")):
        left, right = a.get(part) or {}, b.get(part) or {}
        for name in sorted(set(left) | set(right)):
            value_a, value_b = (_clean(name, side.get(name, MISSING)) for side in (left, right))
            _compare(table, f"{label}{name}", value_a, value_b, "pack")
    inputs_a, inputs_b = a.get("inputs") or {}, b.get("inputs") or {}
    for name in sorted(set(inputs_a) | set(inputs_b)):
        _digest_row(table, f"dataset --{name}", inputs_a.get(name), inputs_b.get(name))
    _digest_row(table, "code", a.get("code"), b.get("code"))
    _digest_row(table, "initial weights", a.get("weights"), b.get("weights"))
    seeds_a, seeds_b = a.get("seeds") or {}, b.get("seeds") or {}
    for name in sorted(set(seeds_a) | set(seeds_b)):
        _compare(table, f"seed {name}", seeds_a.get(name), seeds_b.get(name), "pack")
    first = [_features((pack.get("msprobe_check") or {}).get("dataset")) for pack in (a, b)]
    if first[0] is None or first[1] is None or not _close(first[0], first[1]):
        a_shown, b_shown = (UNKNOWN if f is None else _features_digest(f) for f in first)
        table.rows.append(ConfigRow("first batch (msprobe)", a_shown, b_shown, "pack (msprobe)"))
    else:
        table.checked += 1


def _package_rows(table: ConfigTable, a: dict[str, str], b: dict[str, str]) -> None:
    for name in KEY_PACKAGES:
        if name in a or name in b:
            _compare(table, name, a.get(name, MISSING), b.get(name, MISSING), "pack")
    others = sorted(n for n in set(a) | set(b) if n not in KEY_PACKAGES and a.get(n) != b.get(n))
    if others:
        more = f" and {len(others) - 8} more" if len(others) > 8 else ""
        a_shown, b_shown = (
            ", ".join(f"{n} {side.get(n, MISSING)}" for n in others[:8]) + more for side in (a, b)
        )
        table.rows.append(ConfigRow(f"{len(others)} other packages", a_shown, b_shown, "pack"))
    table.checked += len([n for n in set(a) & set(b) if a[n] == b[n] and n not in KEY_PACKAGES])


def _digest_row(table: ConfigTable, what: str, a: Any, b: Any) -> None:
    digest_a = a.get("digest") if isinstance(a, dict) else None
    digest_b = b.get("digest") if isinstance(b, dict) else None
    if digest_a is not None and digest_a == digest_b:
        table.checked += 1
        return
    table.rows.append(ConfigRow(what, _shown(a), _shown(b), "pack"))


def _features(tree: Any, prefix: str = "") -> dict[str, float] | None:
    """msprobe's nested ``{args: {0: {max, min, mean, norm}}}`` as flat numbers."""
    if not isinstance(tree, dict):
        return None
    flat: dict[str, float] = {}
    for key, value in tree.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            flat[f"{prefix}{key}"] = float(value)
        elif isinstance(value, dict):
            flat.update(_features(value, f"{prefix}{key}.") or {})
    return flat


def _features_digest(features: dict[str, float]) -> str:
    import hashlib

    text = json.dumps({k: f"{v:.6g}" for k, v in features.items()}, sort_keys=True)
    return f"digest {hashlib.sha256(text.encode()).hexdigest()[:16]} ({len(features)} numbers)"


def _close(a: dict[str, float], b: dict[str, float], rtol: float = 1e-5) -> bool:
    """The same statistics within ``rtol`` (a mean on the NPU may round differently)."""
    return set(a) == set(b) and all(abs(a[k] - b[k]) <= rtol * max(abs(a[k]), 1e-12) for k in a)


def _clean(name: str, value: Any) -> str:
    """A pack's value masked again here (a pack written by an older majob, or by hand)."""
    text = value if isinstance(value, str) else json.dumps(value)
    return MASK if text != MISSING and masked(name, text) == MASK else text


def _version_warnings(
    table: ConfigTable, a: dict[str, Any] | None, b: dict[str, Any] | None
) -> None:
    if a is None or b is None:
        return
    for key, name in (("majob", "majob"), ("msprobe", "msprobe")):
        if a.get(key) != b.get(key):
            table.warnings.append(
                f"the packs were written by different {name} versions ({a.get(key)} and "
                f"{b.get(key)}): a difference may come from the collection itself"
            )


# -- HTML: the table at the top of the report (html.py) and the notebook's views --------------


def config_section(config: ConfigTable) -> str:
    """The summary line, the table of what differs (or is unknown), and the warnings."""
    head = "".join(f"<th>{name}</th>" for name in ("what", "A", "B", "from"))
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in (r.what, r.a, r.b, r.source)) + "</tr>"
        for r in config.rows
    )
    notes = "".join(
        f'<li class="warning">{escape(line)}</li>' for line in (*config.unknown, *config.warnings)
    )
    first = config.summary().splitlines()[0]
    return (
        f'<p id="config-summary">{escape(first)}</p>'
        + (f'<table id="configuration"><tr>{head}</tr>{body}</table>' if body else "")
        + (f'<ul id="config-notes">{notes}</ul>' if notes else "")
    )


def report_card(report: Any) -> str:
    """A ``CompareReport`` in a notebook: the verdict, what went in first, then the problems
    (``majob.precision.html.render`` is the whole page)."""
    problems = "".join(f"<li>{escape(p)}</li>" for p in report.problems) or "<li>none</li>"
    config = "" if report.config is None else config_section(report.config)
    grad = getattr(report, "grad", None)
    if grad is not None:  # the layer x step heatmap (gradhtml.py)
        from majob.precision.gradhtml import heatmap

        config += heatmap(grad)
    return (
        f"<div><b>majob compare: {escape(report.verdict)}</b><br>A: {escape(report.golden)}"
        f"<br>B: {escape(report.target)}{config}<ul>{problems}</ul></div>"
    )
