"""The distributed-training collector of the single pass (MA2xx facts): loaders, samplers, saves
and their rank guards, DataParallel/DDP wrappers, calls of local functions, environment writes."""

from __future__ import annotations

import ast
from typing import TypeGuard

from majob.migrate import patterns as pt
from majob.migrate.facts.records import CallSite, DataParallelCall, Loader, Save, Site
from majob.migrate.facts.state import FactsBase


class DistributedFacts(FactsBase):
    """Records what DDP needs to be right: samplers, saves, wrappers, guards through calls."""

    def _environ_write(self, obj: str | None, key: ast.AST, node: ast.AST) -> None:
        if obj != "os.environ" or type(key) is not ast.Constant or not isinstance(key.value, str):
            return
        self.environ_writes.append(Site(self.span(node), key.value))

    def _call_site(self, func: ast.AST) -> None:
        """Calls of local functions, for rank guards that the caller holds (``if rank == 0:``)."""
        if type(func) is ast.Name:
            callee = func.id
        elif (
            type(func) is ast.Attribute
            and type(func.value) is ast.Name
            and func.value.id not in self.aliases  # torch.save is no call of a local save()
        ):
            callee = func.attr  # self.save_snapshot(...), trainer.save(...)
        else:
            return
        if callee not in self.defined_names:
            return  # not a function of this file: no guard to follow
        guard = self._current_guard()
        if guard is None and type(func) is ast.Attribute and type(func.value) is ast.Name:
            # saver.save_checkpoint() where `saver = CheckpointSaver(...)` was built on rank 0
            guard = self.built_under.get((id(self.scope), func.value.id))
        self.call_sites.append(CallSite(callee, guard, self.scope.function))

    def _current_guard(self) -> str | None:
        if self.scope.rank_guarded:
            return "global"
        return self.guard_kind(self._guard_words()) if self.guards else None

    def _object_built(self, name: str, value: ast.AST) -> None:
        """``name = Something(...)``: the guard it was built under, the weakest over every such
        assignment in this scope (``name = None`` elsewhere builds nothing)."""
        key = (id(self.scope), name)
        if type(value) is not ast.Call:
            if key in self.built_under and not (
                type(value) is ast.Constant and value.value is None
            ):
                self.built_under[key] = None  # saver = other: built anywhere
            return
        guard = self._current_guard()
        if key in self.built_under and self.built_under[key] != guard:
            guard = None
        self.built_under[key] = guard

    def _assigned_name(self, node: ast.Call) -> str | None:
        """``X`` in ``X = node`` (the first target of the statement)."""
        stmt = self.stmt
        if type(stmt) is ast.Assign and stmt.value is node and type(stmt.targets[0]) is ast.Name:
            return stmt.targets[0].id
        return None

    def _wrapper_target(self, node: ast.Call) -> str | None:
        """``X`` in ``X = Wrapper(...)`` or ``X = Wrapper(...).cuda()`` (any method chain)."""
        stmt = self.stmt
        if type(stmt) is not ast.Assign or len(stmt.targets) != 1:
            return None
        value: ast.AST = stmt.value
        while value is not node and type(value) is ast.Call and type(value.func) is ast.Attribute:
            value = value.func.value
        target = stmt.targets[0]
        if value is node and type(target) is ast.Name:
            self.wrapped[target.id] = None
            return target.id
        return None

    def _data_parallel(self, node: ast.Call) -> None:
        target = self._wrapper_target(node)
        module = node.args[0] if node.args else None
        module = next((k.value for k in node.keywords if k.arg == "module"), module)
        stmt = self.stmt
        module_src = self.segment(module) if module is not None else None
        if module_src is not None and type(stmt) is ast.Assign and stmt.value is not node:
            # X = DataParallel(m).cuda() keeps the chain on the unwrapped module: X = m.cuda()
            whole_src, call_src = self.segment(stmt.value), self.segment(node)
            if whole_src is None or call_src is None or not whole_src.startswith(call_src):
                module_src = None
            else:
                module_src = f"{module_src}{whole_src[len(call_src) :]}"
        whole = target is not None and stmt is not None and type(stmt) is ast.Assign
        self.data_parallel.append(
            DataParallelCall(
                self.span(node),
                self.span(stmt) if whole and stmt is not None else None,
                target,
                module_src,
                self.scope,
                node.lineno,
            )
        )

    def _loader(self, node: ast.Call) -> None:
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        shuffle = keywords.get("shuffle")
        dataset = node.args[0] if node.args else keywords.get("dataset")
        self.loaders.append(
            Loader(
                self.span(node),
                self._assigned_name(node),
                shuffles=type(shuffle) is ast.Constant and shuffle.value is True,
                has_sampler="sampler" in keywords or "batch_sampler" in keywords,
                dataset=self.segment(dataset)
                if dataset is not None and type(dataset) in (ast.Name, ast.Attribute)
                else None,
                scope=self.scope,
            )
        )

    def _init_process_group(self, node: ast.Call) -> None:
        """Where the process group's rendezvous comes from: ``env`` when it reads the launcher's
        RANK/WORLD_SIZE/MASTER_ADDR (no init_method, or ``"env://"``), else ``given``."""
        method = node.args[1] if len(node.args) > 1 else None
        method = next((k.value for k in node.keywords if k.arg == "init_method"), method)
        env = method is None or (type(method) is ast.Constant and method.value == "env://")
        self.inits.append(Site(self.span(node), "env" if env else "given"))

    def _save(self, node: ast.Call) -> None:
        stmt = self.stmt
        whole = type(stmt) is ast.Expr and stmt.value is node
        guard = "global" if self.scope.rank_guarded else self.guard_kind(self._guard_words())
        self.saves.append(
            Save(self.span(node), self.span(stmt) if whole and stmt else None, guard, self.scope)
        )


def _named(node: ast.expr) -> TypeGuard[ast.Name | ast.Attribute]:
    return type(node) in (ast.Name, ast.Attribute)


def compares_device_index_to_zero(subs: list[ast.AST]) -> bool:
    """``gpu == 0`` / ``self.gpu_id == 0`` among a test's nodes ``subs``: the first process of
    a node, not of the job."""
    for sub in subs:
        if type(sub) is not ast.Compare or len(sub.comparators) != 1:
            continue
        sides = (sub.left, sub.comparators[0])
        zero = any(type(x) is ast.Constant and x.value == 0 for x in sides)
        named = [x.id if isinstance(x, ast.Name) else x.attr for x in sides if _named(x)]
        if zero and any(pt.device_index_name(n) for n in named):
            return True
    return False


# Names a test uses when it is true for a run without a process group, i.e. a single process:
# `not dist.is_initialized() or dist.get_rank() == 0` lets no second rank through.
_SINGLE_PROCESS_WORDS = frozenset({"is_initialized", "is_available", "world_size", "distributed"})


def _ranky(words: frozenset[str]) -> bool:
    return any(g in w for w in words for g in pt.RANK_GUARD_WORDS)


def _rank_modulo(subs: list[ast.AST]) -> bool:
    """``args.rank % ngpus_per_node == 0``: the first process of each node (ImageNet, MoCo)."""
    for sub in subs:
        if type(sub) is ast.BinOp and type(sub.op) is ast.Mod:
            left = sub.left
            name = left.id if type(left) is ast.Name else getattr(left, "attr", "")
            if "rank" in name.lower():
                return True
    return False


def guard_words(test: ast.AST, words: frozenset[str], subs: list[ast.AST]) -> frozenset[str]:
    """The words a rank guard is judged by (``words``: all names in ``test``, ``subs``: all its
    nodes). An ``or`` with an
    alternative that names no rank and no single-process test lets every rank through, so it is
    no guard; a device index compared to 0 or a rank modulo the devices is a per-node guard."""
    if type(test) is ast.BoolOp and type(test.op) is ast.Or:
        for value in test.values:
            part = FactsBase.words(value)
            if not _ranky(part) and not part & _SINGLE_PROCESS_WORDS:
                return frozenset()
    if _rank_modulo(subs):
        return frozenset(w for w in words if not _ranky(frozenset((w,)))) | {"local_rank"}
    if compares_device_index_to_zero(subs):
        return words | {"local_rank"}  # `if gpu_id == 0:` is one process per node
    return words


def unwrap_tested(subs: list[ast.AST]) -> list[str]:
    """Names a test (its nodes ``subs``) checks for a wrapper (``hasattr(m, "module")``,
    ``isinstance(m, DDP)``): code under it picks the wrapped or the plain model itself."""
    names = []
    for sub in subs:
        if type(sub) is not ast.Call or type(sub.func) is not ast.Name or len(sub.args) != 2:
            continue
        first, second = sub.args
        if type(first) is not ast.Name:
            continue
        has_module = type(second) is ast.Constant and second.value == "module"
        checked_type = ast.unparse(second) if sub.func.id == "isinstance" else ""
        wrapper_type = "DataParallel" in checked_type
        if (sub.func.id == "hasattr" and has_module) or wrapper_type:
            names.append(first.id)
    return names
