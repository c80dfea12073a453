"""``majob perf``'s diagnosis of one profile: every rank analysed, msprof-analyze's advisor run
beside (when installed), the findings of both merged and ranked by the time they save."""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field, replace
from pathlib import Path

from majob import display
from majob.errors import UserInputError
from majob.perf import advisor
from majob.perf.analyse import RankProfile, analyse_rank
from majob.perf.findings import Finding, findings
from majob.perf.layout import rank_dirs
from majob.perf.timeline import PARTS


@dataclass(repr=False)
class Diagnosis:
    target: str
    root: Path
    ranks: list[RankProfile]
    findings: list[Finding]
    advisor: advisor.AdvisorResult | None  # None: msprof-analyze is not installed
    skipped: list[str] = field(default_factory=list)  # rank folders not analysed, and why

    @property
    def partial(self) -> list[str]:
        """Why the profile is not whole (empty: it is)."""
        return self.skipped + [f"{r.label}: {why}" for r in self.ranks for why in r.partial]

    @property
    def untypical(self) -> list[str]:
        """The ranks whose profiled steps are far slower than their run's median step: what
        the profile says is then about warm-up (or a loaded machine), not the run."""
        return [note for r in self.ranks if (note := untypical_note(r))]

    def above(self, share: float) -> list[Finding]:
        return [f for f in self.findings if f.share >= share]

    def summary(self) -> str:
        """The step time, its largest parts and the first findings, a line each."""
        return "\n".join(summary_lines(self))

    def __repr__(self) -> str:  # short: the dataclass's would print every step of every rank
        top = self.findings[0].title if self.findings else "no finding"
        return (
            f"<Diagnosis {self.target}: {len(self.ranks)} rank(s), top: {top}"
            f"{', partial' if self.partial else ''}>"
        )

    def _repr_html_(self) -> str | None:
        return display.html(self)


UNTYPICAL = 5.0  # profiled steps this many times the run's median step are not its steps


def untypical_note(rank: RankProfile) -> str:
    """Why ``rank``'s profiled steps are not typical of its run, or ""."""
    if rank.step_source != "majob_steps" or not rank.steps or not rank.p50 > 0:
        return ""
    profiled = statistics.median(s.dur / 1e3 for s in rank.steps)
    if profiled <= UNTYPICAL * rank.p50:
        return ""
    numbers = ", ".join(str(s.number) for s in rank.steps)
    return (
        f"{rank.label}: the profiled steps ({numbers}) took {profiled / rank.p50:.0f}x the run's "
        f"median step ({rank.p50:.3g} ms): they are not typical of the run (warm-up, or a "
        "loaded machine); profile later steps with a larger perf.skip_first"
    )


def diagnose(label: str, root: Path, scratch: Path, *, run_advisor: bool = True) -> Diagnosis:
    """The diagnosis of the profile at ``root`` (``scratch``: a fresh directory for the
    advisor's files). ``UserInputError`` when no rank can be analysed."""
    dirs = rank_dirs(root)
    process = None
    advised = next((d for d in dirs if d.trace is not None), None)
    if run_advisor and advised is not None and advisor.installed():
        process = advisor.start(advisor.prepare(advised, scratch), scratch)
    try:
        profiles, skipped, first_error = [], [], None
        for rank_dir in dirs:
            try:
                profiles.append(analyse_rank(rank_dir))
            except UserInputError as error:
                first_error = first_error or error
                skipped.append(f"{rank_dir.label}: not analysed: {error.message}")
        if not profiles:
            assert first_error is not None
            raise first_error
    except BaseException:  # a bad input, a bug, Ctrl-C: the advisor does not outlive it
        if process is not None:
            process.kill()
            process.communicate()
        raise
    if process is not None and advised is not None:
        result: advisor.AdvisorResult | None = advisor.finish(process, advised.label)
    elif not run_advisor:
        result = advisor.AdvisorResult(False, note="msprof-analyze advisor not run (asked not to)")
    elif not advisor.installed():
        result = None
    else:
        result = advisor.AdvisorResult(False, note="msprof-analyze advisor: no trace to give it")
    merged = merge(findings(profiles), result, profiles)
    return Diagnosis(label, root, profiles, merged, result, skipped)


def merge(
    found: list[Finding], result: advisor.AdvisorResult | None, profiles: list[RankProfile]
) -> list[Finding]:
    """majob's findings with msprof-analyze's: one that measures the same thing confirms
    majob's (its description kept beside), the others are added with its estimate."""
    if result is None or not result.problems:
        return found
    by_key = {f.key: i for i, f in enumerate(found)}
    merged = list(found)
    steps = max(len(next((p.steps for p in profiles if p.label == result.rank), [])), 1)
    step_ms = sum(profiles[0].typical.values()) or 1.0
    for problem in result.problems:
        key = problem.same_as
        if key is not None and key in by_key:
            index = by_key[key]
            merged[index] = replace(
                merged[index],
                source="majob + msprof-analyze",
                also=(*merged[index].also, problem.description),
            )
            continue
        saving = (problem.income_us or 0.0) / steps / 1e3
        merged.append(
            Finding(
                key="msprof:" + re.sub(r"[^a-z0-9]+", "_", problem.category.lower()).strip("_"),
                title=problem.category,
                saving_ms=saving,
                share=saving / step_ms,
                evidence=problem.description,
                advice=problem.suggestions,
                source="msprof-analyze",
                basis="msprof-analyze's estimate" if problem.income_us else "no time estimate",
                where=result.rank,
            )
        )
    return sorted(merged, key=lambda f: -f.saving_ms)


def rank_json(profile: RankProfile) -> dict[str, object]:
    return {
        "label": profile.label,
        "node": profile.node,
        "rank": profile.rank,
        "device": profile.device,
        "events": profile.events,
        "step_ms": {"p50": profile.p50, "p95": profile.p95, "source": profile.step_source},
        "steps_timed": len(profile.step_ms),
        "steps_profiled": [s.number for s in profile.steps],
        "steps_left_out": profile.left_out,
        "breakdown_ms": {p: profile.per_step[p] for p in PARTS},
        "breakdown_share": {p: profile.share(p) for p in PARTS},
        "per_step_ms": [
            {"step": s.number, "total": s.dur / 1e3, **{p: s.parts[p] / 1e3 for p in PARTS}}
            for s in profile.steps
        ],
        "step_times_ms": profile.step_ms,
        "device_busy_share": profile.device_busy,
        "loader": profile.loader,
        "optimizer": profile.optimizer,
        "top_ops": [
            {"name": o.name, "count": o.count, "self_ms": o.self_ms, "share": o.share}
            for o in profile.top_ops
        ],
        "partial": profile.partial,
    }


def finding_json(finding: Finding) -> dict[str, object]:
    return {
        "key": finding.key,
        "title": finding.title,
        "saving_ms_per_step": finding.saving_ms,
        "share_of_step": finding.share,
        "evidence": finding.evidence,
        "advice": list(finding.advice),
        "source": finding.source,
        "basis": finding.basis,
        "where": finding.where,
        "also": list(finding.also),
    }


def to_json(diagnosis: Diagnosis) -> dict[str, object]:
    result = diagnosis.advisor
    return {
        "target": diagnosis.target,
        "root": str(diagnosis.root),
        "partial": diagnosis.partial,
        "untypical": diagnosis.untypical,
        "findings": [finding_json(f) for f in diagnosis.findings],
        "ranks": [rank_json(p) for p in diagnosis.ranks],
        "msprof_analyze": {"ran": False, "note": advisor.INSTALL_HINT, "problems": []}
        if result is None
        else {
            "ran": result.ran,
            "rank": result.rank,
            "note": result.note,
            "problems": [
                {
                    "category": p.category,
                    "description": p.description,
                    "suggestions": list(p.suggestions),
                    "income_us": p.income_us,
                }
                for p in result.problems
            ],
        },
    }


def summary_lines(diagnosis: Diagnosis, limit: int = 3) -> list[str]:
    """A few lines for the end of a profiled run (``majob run --perf``): the step time, the
    largest parts, the first findings with their first advice, and whether it is partial."""
    lines = []
    for rank in diagnosis.ranks[:1]:
        parts = sorted(PARTS, key=lambda p: -rank.per_step[p])[:3]
        shares = ", ".join(f"{p} {100 * rank.share(p):.0f}%" for p in parts)
        lines.append(
            f"step time p50 {rank.p50:.3g} ms, p95 {rank.p95:.3g} ms ({rank.label}): {shares}"
        )
    for index, finding in enumerate(diagnosis.findings[:limit], 1):
        advice = f": {finding.advice[0]}" if finding.advice else ""
        lines.append(
            f"{index}. saves {finding.saving_ms:.3g} ms a step ({100 * finding.share:.0f}%), "
            f"{finding.title}{advice}"
        )
    if not diagnosis.findings:
        lines.append("nothing to fix: no finding would save 2% of a step")
    if diagnosis.partial:
        lines.append(f"partial profile: {diagnosis.partial[0]}")
    lines += [f"note: {note}" for note in diagnosis.untypical[:1]]
    return lines
