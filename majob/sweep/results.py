"""A sweep's results: one row per trial (sorted by objective), the best trial's spec written as
a ready spec file, and a plot (objective over trials, objective against each parameter).
"""

from __future__ import annotations

import html
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from majob.sweep.space import shown
from majob.sweep.store import SweepInfo

if TYPE_CHECKING:
    import optuna

# How a trial's state reads in the table.
_STATES = {"COMPLETE": "completed", "PRUNED": "pruned", "FAIL": "failed", "RUNNING": "running"}


@dataclass(frozen=True)
class TrialRow:
    """One trial as the table shows it."""

    number: int
    job_name: str
    job_id: str
    params: dict[str, Any]
    state: str  # completed, pruned, failed, running
    phase: str
    objective: float | None  # the final value (completed), or the last reported so far
    reason: str = ""

    @property
    def label(self) -> str:
        return f"t{self.number + 1}"


@dataclass(frozen=True)
class SweepResult:
    """Every trial of one sweep; ``best`` is the completed trial with the best objective."""

    info: SweepInfo
    rows: tuple[TrialRow, ...]
    # fANOVA importance of each parameter for the objective (``importance_of``); empty when
    # not computed (the live table does without) or not meaningful.
    importance: Mapping[str, float] = field(default_factory=dict)

    @property
    def best(self) -> TrialRow | None:
        done = [r for r in self.rows if r.state == "completed" and r.objective is not None]
        if not done:
            return None
        pick = min if self.info.goal == "min" else max
        return pick(done, key=lambda r: r.objective or 0.0)

    def sorted(self) -> list[TrialRow]:
        """Completed trials best first, then pruned, running and failed ones, by number."""
        sign = 1.0 if self.info.goal == "min" else -1.0
        order = {"completed": 0, "pruned": 1, "running": 2, "failed": 3}
        return sorted(
            self.rows,
            key=lambda r: (
                order.get(r.state, 4),
                sign * r.objective if r.state == "completed" and r.objective is not None else 0,
                r.number,
            ),
        )

    @property
    def summary(self) -> str:
        counts = {s: sum(r.state == s for r in self.rows) for s in _STATES.values()}
        said = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        best = self.best
        top = (
            f"; best {best.label} ({shown(best.params)}): {self.info.metric} {best.objective:g}"
            if best is not None
            else "; no trial completed"
        )
        return f"sweep {self.info.id}: {said or 'no trials'}{top}"

    def __repr__(self) -> str:
        return f"<SweepResult {self.summary}>"

    def _repr_html_(self) -> str:
        return table_html(self)

    def plot(self) -> Any:
        """Objective over trials and against each parameter (matplotlib); the Figure."""
        return plot_figure(self)


def rows_of(study: optuna.Study, phases: Mapping[int, str] | None = None) -> tuple[TrialRow, ...]:
    """Every trial as recorded; ``phases``: the running trials' phases as last polled (the
    study records a trial's phase when it ends)."""
    phases = phases or {}
    rows = []
    for trial in study.get_trials(deepcopy=False):
        state = _STATES.get(trial.state.name, trial.state.name.lower())
        value = trial.value if trial.state.name == "COMPLETE" else None
        if value is None and trial.intermediate_values:
            value = trial.intermediate_values[max(trial.intermediate_values)]
        attrs = trial.user_attrs
        rows.append(
            TrialRow(
                number=trial.number,
                job_name=str(attrs.get("job_name", "")),
                job_id=str(attrs.get("job_id", "")),
                params=dict(trial.params),
                state=state,
                phase=phases.get(trial.number) or str(attrs.get("phase", "")),
                objective=value,
                reason=str(attrs.get("reason", "")),
            )
        )
    return tuple(rows)


def importance_of(study: optuna.Study) -> dict[str, float]:
    """How much each parameter explains of the objective over the completed trials (Optuna's
    fANOVA, seeded: the same trials give the same figures); empty with fewer than 3 completed
    trials or a single parameter, where it says nothing."""
    import optuna

    done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    if len(done) < 3 or len({name for t in done for name in t.params}) < 2:
        return {}
    evaluator = optuna.importance.FanovaImportanceEvaluator(n_trees=16, seed=0)
    found = optuna.importance.get_param_importances(study, evaluator=evaluator)
    return {name: float(value) for name, value in found.items()}


def write_best_spec(result: SweepResult, target: Path | None = None) -> Path:
    """The spec file as written, with the best trial's values and no ``sweep:`` block, beside
    the original (its relative paths stay right); the path written."""
    from ruamel.yaml import YAML

    from majob.errors import UserInputError

    best = result.best
    if best is None:
        raise UserInputError(f"sweep {result.info.id} has no completed trial yet")
    source = Path(result.info.spec)
    yaml = YAML()  # round-trip: the user's comments and order are kept
    data = yaml.load(source.read_text(encoding="utf-8"))
    data.pop("sweep", None)
    data.setdefault("hyperparameters", {})
    for name, value in best.params.items():
        data["hyperparameters"][name] = value
        override = (data.get("stages") or {}).get(result.info.stage) or {}
        if name in (override.get("hyperparameters") or {}):
            override["hyperparameters"][name] = value
    header = (
        f"# The best trial ({best.label}, job {best.job_id}) of sweep {result.info.id}: "
        f"{result.info.metric} {best.objective:g}\n"
    )
    text = io.StringIO()
    yaml.dump(data, text)  # the file's own leading comments follow the header
    target = target or source.with_name(f"{source.stem}.best.yaml")
    target.write_text(header + text.getvalue(), encoding="utf-8")
    return target


def table_html(result: SweepResult) -> str:
    names = list(result.rows[0].params) if result.rows else []
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["trial", *names, "state", "objective"])
    body = []
    for row in result.sorted():
        cells = [row.label, *(str(row.params.get(n, "")) for n in names), row.state]
        cells.append("" if row.objective is None else f"{row.objective:g}")
        body.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return f"<p>{html.escape(result.summary)}</p><table><tr>{head}</tr>{''.join(body)}</table>"


def plot_figure(result: SweepResult) -> Any:
    from majob.errors import UserInputError

    try:
        import matplotlib

        if not _interactive():  # a terminal or a test: no window to draw into
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserInputError(
            "plotting needs matplotlib", hint="pip install 'majob[plot]'"
        ) from None
    names = list(result.rows[0].params) if result.rows else []
    panels = 1 + len(names) + (1 if result.importance else 0)
    figure, axes = plt.subplots(1, panels, figsize=(4 * panels, 3.2))
    axes = list(axes) if panels > 1 else [axes]
    if result.importance:
        bars = axes.pop()
        bars.barh(list(result.importance), list(result.importance.values()))
        bars.set_title("parameter importance (fANOVA)")
    shown_rows = [r for r in result.rows if r.objective is not None]
    colors = {"completed": "tab:blue", "pruned": "tab:orange", "running": "tab:gray"}
    for row in shown_rows:
        color = colors.get(row.state, "tab:red")
        axes[0].scatter(row.number + 1, row.objective, color=color)
        for ax, name in zip(axes[1:], names, strict=True):
            ax.scatter(row.params[name], row.objective, color=color)
    axes[0].set_xlabel("trial")
    axes[0].set_ylabel(result.info.metric)
    axes[0].set_title("objective over trials (orange: pruned)")
    for ax, name in zip(axes[1:], names, strict=True):
        ax.set_xlabel(name)
        values = [r.params[name] for r in shown_rows]
        positive = values and all(isinstance(v, (int, float)) and v > 0 for v in values)
        if positive and max(values) / min(values) > 100:  # a log-scale range reads as one
            ax.set_xscale("log")
    figure.tight_layout()
    return figure


def write_html(result: SweepResult, target: Path) -> Path:
    """The table and the plot (inline SVG) in one HTML file."""
    import matplotlib.pyplot as plt

    figure = plot_figure(result)
    svg = io.StringIO()
    figure.savefig(svg, format="svg")
    plt.close(figure)
    target.write_text(
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(result.info.id)}"
        f"</title></head><body>{table_html(result)}{svg.getvalue()}</body></html>",
        encoding="utf-8",
    )
    return target


def _interactive() -> bool:
    import sys

    return "ipykernel" in sys.modules
