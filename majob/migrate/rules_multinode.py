"""What breaks when a job has several nodes (MA207-MA211): rendezvous addresses written in the
code, a process group that ignores what ModelArts passes each node, and code that only runs
under a launcher (torchrun, accelerate launch) where ModelArts starts plain python."""

from __future__ import annotations

from majob.migrate import patterns as pt
from majob.migrate.facts import FileFacts
from majob.migrate.findings import FileFindings, Fix
from majob.migrate.rules import Codemod


def check_multinode(facts: FileFacts, out: FileFindings) -> None:
    """MA207-MA211, each reported where it is."""
    _ma207_ma209_environment(facts, out)
    _ma208_tcp_addresses(facts, out)
    _ma210_rendezvous_ignores_platform(facts, out)
    _ma211_launcher_only(facts, out)


def _ma207_ma209_environment(facts: FileFacts, out: FileFindings) -> None:
    for site in facts.environ_writes:
        if site.detail in pt.RENDEZVOUS_ENV:
            out.report("MA207", site.span, site.detail)
        elif site.detail == "CUDA_VISIBLE_DEVICES":
            out.report("MA209", site.span)


def _ma208_tcp_addresses(facts: FileFacts, out: FileFindings) -> None:
    """A tcp:// default of a flag (``--dist-url``) gets the ``--init_method`` spelling: the
    address ModelArts passes each node then replaces it (the ``--world_size`` the platform
    passes turns the rendezvous on). One in the code is fixed by hand."""
    for site in facts.tcp_addresses:
        flag = facts.tcp_flags.get(site.span)
        fixes = []
        if flag is not None:
            span, declared = flag
            code = f'{declared}, "--init_method"'
            fixes.append(Fix(Codemod.CLOUD_PATHS, "MA208", "replace-expr", span, code=code))
        out.report("MA208", site.span, site.detail, *fixes)


def _ma210_rendezvous_ignores_platform(facts: FileFacts, out: FileFindings) -> None:
    """A group that reads the launcher's environment, or a file that declares no --world_size
    (so its world size cannot come from the platform). MASTER_ADDR set in code is MA207's."""
    if any(site.detail in pt.RENDEZVOUS_ENV for site in facts.environ_writes):
        return
    for site in facts.inits:
        if site.detail == "env":
            out.report("MA210", site.span, "env:// rendezvous (RANK, WORLD_SIZE, MASTER_ADDR)")
        elif "world_size" not in facts.flags:
            out.report("MA210", site.span, "no --world_size argument")


def _ma211_launcher_only(facts: FileFacts, out: FileFindings) -> None:
    for site in facts.launcher_only:
        out.report("MA211", site.span, site.detail)
