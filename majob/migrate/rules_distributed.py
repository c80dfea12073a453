"""Distributed training (MA201-MA209): from DataParallel to DDP, and what DDP needs to be right.

The ``ddp`` codemod's fixes are planned even for a script that is not distributed yet, because
converting its DataParallel makes it one: then they are applied with the conversion but not
reported, as nothing is wrong until the conversion happens. Each rule is one function below,
named by its id; ``check_distributed`` runs them in order over one shared ``_Plan``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from majob.migrate import patterns as pt
from majob.migrate.facts import FileFacts
from majob.migrate.facts.records import DataParallelCall, ParseSite, Save
from majob.migrate.findings import FileFindings, Fix, Span
from majob.migrate.rules import Codemod
from majob.migrate.rules_multinode import check_multinode

_SAVE_HELPER = re.compile(r"save|checkpoint|ckpt|snapshot", re.IGNORECASE)
_GUARD_ORDER = {None: 0, "local": 1, "global": 2}


@dataclass
class _Plan:
    """What the distributed rules share while they run."""

    facts: FileFacts
    out: FileFindings
    parse: ParseSite | None
    distributed: bool  # the script is distributed already
    converting: bool  # its DataParallel becomes DDP
    ddp_fixes: list[Fix] = field(default_factory=list)
    imports: dict[str, None] = field(default_factory=dict)
    adds_sampler: bool = False
    loaders_with_sampler: dict[str, None] = field(default_factory=dict)

    @property
    def dist(self) -> str:
        """The name of torch.distributed for fixes; the import is added only when one uses it."""
        if self.facts.binding("torch.distributed") is None:
            self.imports["import torch.distributed as dist\n"] = None
        return self.facts.binding("torch.distributed") or "dist"

    @property
    def torch(self) -> str:
        if self.facts.binding("torch") is None:
            self.imports["import torch\n"] = None
        return self.facts.binding("torch") or "torch"

    @property
    def sampler(self) -> str:
        return self.facts.binding(*pt.DISTRIBUTED_SAMPLER) or "DistributedSampler"

    def need_sampler_import(self) -> None:
        if self.facts.binding(*pt.DISTRIBUTED_SAMPLER) is None:
            self.imports["from torch.utils.data.distributed import DistributedSampler\n"] = None

    def report_or_plan(self, reported: bool, rule: str, span: Span, fixes: list[Fix]) -> None:
        # Not reported: nothing is wrong yet, but the DataParallel conversion will need the fixes.
        if reported:
            self.out.report(rule, span, "", *fixes)
        else:
            self.ddp_fixes.extend(fixes)


def check_distributed(facts: FileFacts, out: FileFindings) -> None:
    """MA201-MA209: DataParallel, samplers, epoch loops, checkpoint saves, rendezvous settings."""
    _ma201_data_parallel_function(facts, out)
    check_multinode(facts, out)
    parse = facts.entry_parse()
    convertible = [
        dp
        for dp in facts.data_parallel
        if dp.stmt and dp.module_src and parse and facts.visible(parse, dp.scope, dp.line)
    ]
    plan = _Plan(
        facts,
        out,
        parse,
        distributed=facts.has_ddp or facts.has_init or bool(facts.samplers),
        converting=bool(convertible) and parse is not None,
    )
    _ma201_data_parallel(plan, convertible)
    if plan.converting:
        _init_process_group(plan)
    if not (plan.distributed or plan.converting):
        _ma205_wrapped_state_dicts(facts, out)
        return
    _ma202_loaders_without_sampler(plan)
    _ma203_set_epoch(plan)
    _ma204_ma206_saves(plan)
    _ma205_wrapped_state_dicts(facts, out)
    if plan.converting or any(f.codemod is Codemod.DDP for f in [*out.fixes, *plan.ddp_fixes]):
        for code in plan.imports:
            plan.ddp_fixes.append(facts.import_fix(Codemod.DDP, "MA201", code))
    out.fixes.extend(plan.ddp_fixes)


def _ma201_data_parallel_function(facts: FileFacts, out: FileFindings) -> None:
    for site in facts.data_parallel_functions:
        out.report("MA201", site.span, site.detail)


def _ma201_data_parallel(plan: _Plan, convertible: list[DataParallelCall]) -> None:
    """DataParallel -> DDP on the device this process was given (``device_ids``)."""
    facts = plan.facts
    for dp in facts.data_parallel:
        fixes = []
        if plan.converting and dp in convertible and dp.stmt:
            ddp_name = facts.binding(*pt.DDP) or "DistributedDataParallel"
            if facts.binding(*pt.DDP) is None:
                plan.imports["from torch.nn.parallel import DistributedDataParallel\n"] = None
            torch = plan.torch
            lines = []
            if dp.module_src != dp.target:
                lines.append(f"{dp.target} = {dp.module_src}\n")
            lines.append(
                f"if {plan.dist}.is_initialized():\n"
                f"    {dp.target} = {ddp_name}(\n"
                f"        {dp.target},\n"
                f"        device_ids=[{torch}.cuda.current_device()]"
                f" if {torch}.cuda.is_available() else None,\n"
                f"    )\n"
            )
            fixes.append(Fix(Codemod.DDP, "MA201", "replace-stmt", dp.stmt, code="".join(lines)))
        plan.out.report("MA201", dp.span, "DataParallel", *fixes)
        if fixes:
            plan.out.report("MA212", dp.span, "the ddp rewrite starts no process per device")


def _init_process_group(plan: _Plan) -> None:
    """The flags ModelArts passes each node, the process group, and this process's device."""
    facts, parse = plan.facts, plan.parse
    if parse is None or facts.has_init:
        return
    args = parse.args_name
    defaults = {"init_method": "None", "rank": "0", "world_size": "1"}
    types = {"init_method": "str", "rank": "int", "world_size": "int"}
    code = "".join(
        f'{parse.parser_name}.add_argument("--{flag}", type={types[flag]}, '
        f"default={defaults[flag]})\n"
        for flag in pt.INJECTED_DIST_FLAGS
        if flag not in facts.flags
    )
    if code:
        plan.ddp_fixes.append(Fix(Codemod.DDP, "MA201", "insert-before", parse.stmt, code=code))
    # the flag that takes what the platform passes may keep the script's name (--dist-url)
    dest = {flag: facts.flag_dests.get(flag, flag) for flag in pt.INJECTED_DIST_FLAGS}
    torch = plan.torch
    atexit_name = facts.binding("atexit") or "atexit"
    if facts.binding("atexit") is None:
        plan.imports["import atexit\n"] = None
    os_name = facts.binding("os") or "os"
    if facts.binding("os") is None:
        plan.imports["import os\n"] = None
    plan.ddp_fixes.append(
        Fix(
            Codemod.DDP,
            "MA201",
            "insert-after",
            parse.stmt,
            code=(
                f"if {args}.{dest['world_size']} > 1:\n"
                f"    if {torch}.cuda.is_available():\n"
                f"        # one process per device: LOCAL_RANK when a launcher starts several\n"
                f'        {torch}.cuda.set_device(int({os_name}.environ.get("LOCAL_RANK", 0)))\n'
                f"    {plan.dist}.init_process_group(\n"
                f'        backend="nccl" if {torch}.cuda.is_available() else "gloo",\n'
                f"        init_method={args}.{dest['init_method']},\n"
                f"        rank={args}.{dest['rank']},\n"
                f"        world_size={args}.{dest['world_size']},\n"
                f"    )\n"
                # A gloo rank that exits with its group alive can die of SIGABRT at exit: a
                # worker thread frees the last collective's tensors and needs the GIL while
                # Python shuts down. Leave the group before that, together: rank 0 hosts the
                # rendezvous store, so no rank may leave while another still needs it.
                "\n"
                f"    @{atexit_name}.register\n"
                "    def _leave_process_group():\n"
                "        # Leave the group together before Python exits: a rank that exits in\n"
                "        # it can die of SIGABRT, and rank 0 hosts the rendezvous store.\n"
                f"        if {plan.dist}.is_initialized():\n"
                f"            {plan.dist}.barrier()\n"
                f"            {plan.dist}.destroy_process_group()\n"
            ),
        )
    )


def _ma202_loaders_without_sampler(plan: _Plan) -> None:
    facts = plan.facts
    plan.loaders_with_sampler = {
        ld.target: None for ld in facts.loaders if ld.target and ld.has_sampler
    }
    if facts.samplers:
        return
    for loader in facts.loaders:
        if not loader.shuffles or loader.has_sampler:
            continue
        fixes = []
        if loader.dataset:
            plan.adds_sampler = True
            if loader.target:
                plan.loaders_with_sampler[loader.target] = None
            init = f"{plan.dist}.is_initialized()"
            kwargs = {
                "shuffle": f"not {init}",
                "sampler": f"{plan.sampler}({loader.dataset}) if {init} else None",
            }
            fixes = [
                Fix(Codemod.DDP, "MA202", "set-kwarg", loader.span, name=name, code=code)
                for name, code in kwargs.items()
            ]
        plan.report_or_plan(plan.distributed, "MA202", loader.span, fixes)
    if plan.adds_sampler:
        plan.need_sampler_import()


def _ma203_set_epoch(plan: _Plan) -> None:
    """Each epoch loop calls set_epoch: on a named sampler, or through the loader it feeds."""
    facts = plan.facts
    has_sampler = bool(facts.samplers)
    if not (has_sampler or plan.adds_sampler) or facts.sets_epoch:
        return
    sampled: dict[str, None] = {s: None for _, s in facts.samplers if s}
    epoch_loops = [loop for loop in facts.all_loops if not loop.nested]
    for loop in epoch_loops:
        fixes = []
        sampler_var = next((n for n in loop.refs if n in sampled), None)
        loader_var = next((n for n in loop.refs if n in plan.loaders_with_sampler), None)
        if loader_var is None and sampler_var is None:
            # The loop calls train(epoch) and the loader lives at module level or in the loop's
            # function: the loop can still reach it.
            reachable = [
                ld.target
                for ld in facts.loaders
                if ld.target in plan.loaders_with_sampler
                and ld.scope is not None
                and (ld.scope.is_module or ld.scope is loop.scope)
            ]
            loader_var = reachable[0] if len(reachable) == 1 else None
        if loop.target and sampler_var:
            code = f"{sampler_var}.set_epoch({loop.target})\n"
        elif loop.target and loader_var:
            code = (
                f"if isinstance({loader_var}.sampler, {plan.sampler}):\n"
                f"    {loader_var}.sampler.set_epoch({loop.target})\n"
            )
            plan.need_sampler_import()
        else:
            code = ""
        if code:
            fixes.append(Fix(Codemod.DDP, "MA203", "prepend-body", loop.span, code=code))
        plan.report_or_plan(has_sampler, "MA203", loop.span, fixes)
    if has_sampler and not epoch_loops:
        plan.out.report("MA203", facts.samplers[0][0], "no epoch loop found")


def _function_guards(facts: FileFacts) -> dict[str, str | None]:
    """The guard every call of each local function runs under (the weakest of its call sites,
    a caller's own guard included): ``if rank == 0: save_checkpoint(...)`` guards the helper."""
    sites: dict[str, list[tuple[str | None, str | None]]] = {}
    for call in facts.call_sites:
        if call.callee in facts.functions:
            sites.setdefault(call.callee, []).append((call.guard, call.caller))
    resolved: dict[str, str | None] = {}
    return {name: _guard_of(name, sites, resolved, frozenset()) for name in sites}


def _guard_of(
    name: str,
    sites: dict[str, list[tuple[str | None, str | None]]],
    resolved: dict[str, str | None],
    seen: frozenset[str],
) -> str | None:
    # A module function, not a closure: a recursive closure is a reference cycle, and the
    # check runs with the cycle collector paused.
    if name in resolved:
        return resolved[name]
    if name in seen or name not in sites:
        return None
    weakest: str | None = "global"
    for guard, caller in sites[name]:
        if guard is None and caller is not None:
            guard = _guard_of(caller, sites, resolved, seen | {name})
        if _GUARD_ORDER[guard] < _GUARD_ORDER[weakest]:
            weakest = guard
    resolved[name] = weakest
    return weakest


def _save_guard(save: Save, guards: dict[str, str | None]) -> str | None:
    if save.guard is not None or save.scope is None or save.scope.function is None:
        return save.guard
    return guards.get(save.scope.function)


def _ma204_ma206_saves(plan: _Plan) -> None:
    """Saves run on global rank 0; a save helper (named for saving, with no loop and no
    collective, so no rank can be left waiting) is guarded whole, its copies and logs too."""
    facts = plan.facts
    guards = _function_guards(facts)
    for save in facts.saves:
        guard = _save_guard(save, guards)
        if guard == "global":
            continue
        if guard == "local":
            if plan.distributed:
                plan.out.report("MA206", save.span)
            continue
        fixes = []
        scope = save.scope
        if (
            scope is not None
            and scope.function is not None
            and scope.span is not None
            and _SAVE_HELPER.search(scope.function)
            and not scope.loops_or_syncs
        ):
            code = (
                f"if {plan.dist}.is_initialized() and {plan.dist}.get_rank() != 0:\n"
                f"    return  # rank 0 writes the checkpoint (and its copies)\n"
            )
            fixes.append(Fix(Codemod.DDP, "MA204", "prepend-function", scope.span, code=code))
        elif save.stmt:
            cond = f"not {plan.dist}.is_initialized() or {plan.dist}.get_rank() == 0"
            fixes.append(Fix(Codemod.DDP, "MA204", "wrap-stmt", save.stmt, code=cond))
        plan.report_or_plan(plan.distributed, "MA204", save.span, fixes)


def _ma205_wrapped_state_dicts(facts: FileFacts, out: FileFindings) -> None:
    """MA205, for any script: the state_dict of a DataParallel/DDP-wrapped model; the fix unwraps
    the loads of the same model too, so save and load stay symmetric."""
    loads: dict[str, list[Span]] = {}
    for span, receiver in facts.loads:
        loads.setdefault(receiver.id, []).append(span)
    for span, receiver in facts.state_dicts:
        name = receiver.id
        if name not in facts.wrapped:
            continue
        code = f'getattr({name}, "module", {name})'
        fixes = [Fix(Codemod.DDP, "MA205", "replace-expr", facts.span(receiver), code=code)]
        fixes += [
            Fix(Codemod.DDP, "MA205", "replace-expr", load, code=code)
            for load in loads.get(name, [])
        ]
        out.report("MA205", span, f"{name}.state_dict()", *fixes)
