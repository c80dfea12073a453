"""Distributed training (MA201-MA209): from DataParallel to DDP, and what DDP needs to be right.

The ``ddp`` codemod's fixes are planned even for a script that is not distributed yet, because
converting its DataParallel makes it one: then they are applied with the conversion but not
reported, as nothing is wrong until the conversion happens.
"""

from __future__ import annotations

from majob.migrate import patterns as pt
from majob.migrate.facts import FileFacts
from majob.migrate.findings import FileFindings, Fix, Span
from majob.migrate.rules import Codemod


def check_distributed(facts: FileFacts, out: FileFindings) -> None:
    """MA201-MA209: DataParallel, samplers, epoch loops, checkpoint saves, rendezvous settings."""
    for site in facts.data_parallel_functions:
        out.report("MA201", site.span, site.detail)
    for site in facts.environ_writes:
        if site.detail in pt.RENDEZVOUS_ENV:
            out.report("MA207", site.span, site.detail)
        elif site.detail == "CUDA_VISIBLE_DEVICES":
            out.report("MA209", site.span)
    for site in facts.tcp_addresses:
        out.report("MA208", site.span, site.detail)
    parse = facts.entry_parse()
    convertible = [
        dp
        for dp in facts.data_parallel
        if dp.stmt and dp.module_src and parse and facts.visible(parse, dp.scope, dp.line)
    ]
    distributed = facts.has_ddp or facts.has_init or bool(facts.samplers)
    converting = bool(convertible) and parse is not None
    ddp_fixes: list[Fix] = []

    def report_or_plan(reported: bool, rule: str, span: Span, fixes: list[Fix]) -> None:
        # Not reported: nothing is wrong yet, but the DataParallel conversion will need the fixes.
        if reported:
            out.report(rule, span, "", *fixes)
        else:
            ddp_fixes.extend(fixes)

    dist_name = facts.binding("torch.distributed") or "dist"
    sampler_name = facts.binding(*pt.DISTRIBUTED_SAMPLER) or "DistributedSampler"
    imports: dict[str, None] = {}
    for dp in facts.data_parallel:
        fixes = []
        if converting and dp in convertible and dp.stmt:
            ddp_name = facts.binding(*pt.DDP) or "DistributedDataParallel"
            if facts.binding(*pt.DDP) is None:
                imports["from torch.nn.parallel import DistributedDataParallel\n"] = None
            lines = []
            if dp.module_src != dp.target:
                lines.append(f"{dp.target} = {dp.module_src}\n")
            lines.append(
                f"if {dist_name}.is_initialized():\n    {dp.target} = {ddp_name}({dp.target})\n"
            )
            fixes.append(Fix(Codemod.DDP, "MA201", "replace-stmt", dp.stmt, code="".join(lines)))
        out.report("MA201", dp.span, "DataParallel", *fixes)
    if converting and parse is not None:
        args = parse.args_name
        defaults = {"init_method": "None", "rank": "0", "world_size": "1"}
        types = {"init_method": "str", "rank": "int", "world_size": "int"}
        code = "".join(
            f'{parse.parser_name}.add_argument("--{flag}", type={types[flag]}, '
            f"default={defaults[flag]})\n"
            for flag in pt.INJECTED_DIST_FLAGS
            if flag not in facts.flags
        )
        if code and not facts.has_init:
            ddp_fixes.append(Fix(Codemod.DDP, "MA201", "insert-before", parse.stmt, code=code))
        if not facts.has_init:
            torch_name = facts.binding("torch") or "torch"
            if facts.binding("torch") is None:
                imports["import torch\n"] = None
            atexit_name = facts.binding("atexit") or "atexit"
            if facts.binding("atexit") is None:
                imports["import atexit\n"] = None
            ddp_fixes.append(
                Fix(
                    Codemod.DDP,
                    "MA201",
                    "insert-after",
                    parse.stmt,
                    code=(
                        f"if {args}.world_size > 1:\n"
                        f"    {dist_name}.init_process_group(\n"
                        f'        backend="nccl" if {torch_name}.cuda.is_available() '
                        f'else "gloo",\n'
                        f"        init_method={args}.init_method,\n"
                        f"        rank={args}.rank,\n"
                        f"        world_size={args}.world_size,\n"
                        f"    )\n"
                        # A gloo rank that exits with its group alive can die of SIGABRT at
                        # exit: a worker thread frees the last collective's tensors and needs
                        # the GIL while Python shuts down. Leave the group before that.
                        "    # Leave the group before Python exits: a rank that exits in it can\n"
                        "    # die of SIGABRT.\n"
                        f"    {atexit_name}.register(lambda: {dist_name}.is_initialized() "
                        f"and {dist_name}.destroy_process_group())\n"
                    ),
                )
            )
    if not (distributed or converting):
        _wrapped_state_dicts(facts, out)
        return
    if facts.binding("torch.distributed") is None:
        imports["import torch.distributed as dist\n"] = None
    has_sampler = bool(facts.samplers)
    sampled: dict[str, None] = {s: None for _, s in facts.samplers if s}
    loaders_with_sampler: dict[str, None] = {
        ld.target: None for ld in facts.loaders if ld.target and ld.has_sampler
    }
    adds_sampler = False
    if not has_sampler:
        for loader in facts.loaders:
            if not loader.shuffles or loader.has_sampler:
                continue
            fixes = []
            if loader.dataset:
                adds_sampler = True
                if loader.target:
                    loaders_with_sampler[loader.target] = None
                init = f"{dist_name}.is_initialized()"
                kwargs = {
                    "shuffle": f"not {init}",
                    "sampler": f"{sampler_name}({loader.dataset}) if {init} else None",
                }
                fixes = [
                    Fix(Codemod.DDP, "MA202", "set-kwarg", loader.span, name=name, code=code)
                    for name, code in kwargs.items()
                ]
            report_or_plan(distributed, "MA202", loader.span, fixes)
    if adds_sampler and facts.binding(*pt.DISTRIBUTED_SAMPLER) is None:
        imports["from torch.utils.data.distributed import DistributedSampler\n"] = None
    if (has_sampler or adds_sampler) and not facts.sets_epoch:
        epoch_loops = [loop for loop in facts.all_loops if not loop.nested]
        for loop in epoch_loops:
            fixes = []
            sampler_var = next((n for n in loop.refs if n in sampled), None)
            loader_var = next((n for n in loop.refs if n in loaders_with_sampler), None)
            if loop.target and sampler_var:
                code = f"{sampler_var}.set_epoch({loop.target})\n"
            elif loop.target and loader_var:
                code = (
                    f"if isinstance({loader_var}.sampler, {sampler_name}):\n"
                    f"    {loader_var}.sampler.set_epoch({loop.target})\n"
                )
                if facts.binding(*pt.DISTRIBUTED_SAMPLER) is None:
                    imports["from torch.utils.data.distributed import DistributedSampler\n"] = None
            else:
                code = ""
            if code:
                fixes.append(Fix(Codemod.DDP, "MA203", "prepend-body", loop.span, code=code))
            report_or_plan(has_sampler, "MA203", loop.span, fixes)
        if has_sampler and not epoch_loops:
            out.report("MA203", facts.samplers[0][0], "no epoch loop found")
    for save in facts.saves:
        if save.guard == "global":
            continue
        if save.guard == "local":
            if distributed:
                out.report("MA206", save.span)
            continue
        fixes = []
        if save.stmt:
            cond = f"not {dist_name}.is_initialized() or {dist_name}.get_rank() == 0"
            fixes.append(Fix(Codemod.DDP, "MA204", "wrap-stmt", save.stmt, code=cond))
        report_or_plan(distributed, "MA204", save.span, fixes)
    _wrapped_state_dicts(facts, out)
    if converting or any(f.codemod is Codemod.DDP for f in [*out.fixes, *ddp_fixes]):
        for code in imports:
            ddp_fixes.append(facts.import_fix(Codemod.DDP, "MA201", code))
    out.fixes.extend(ddp_fixes)


def _wrapped_state_dicts(facts: FileFacts, out: FileFindings) -> None:
    """MA205, for any script: the state_dict of a DataParallel/DDP-wrapped model."""
    # X.state_dict() of a wrapped X (checkpoint dicts included) has 'module.' keys.
    for span, receiver in facts.state_dicts:
        name = receiver.id
        if name not in facts.wrapped:
            continue
        code = f'getattr({name}, "module", {name})'
        fix = Fix(Codemod.DDP, "MA205", "replace-expr", facts.span(receiver), code=code)
        out.report("MA205", span, f"{name}.state_dict()", fix)
