"""The Ascend rules of ``majob check`` (MA3xx, ``--target npu`` only): what migrates to the NPU
automatically, what only by hand, and what blocks it."""

from __future__ import annotations

from majob.migrate.rule_kinds import Codemod, Rule, Severity

_W, _E = Severity.WARNING, Severity.ERROR
_NPU_BOTH = (Codemod.NPU_AUTO, Codemod.NPU_MANUAL)
_NPU_MANUAL = (Codemod.NPU_MANUAL,)

NPU_RULES: tuple[Rule, ...] = (
    # ---- Ascend NPU target: what migrates, automatically or by hand
    Rule(
        "MA301",
        "nccl-backend",
        _E,
        "the nccl backend does not exist on Ascend NPUs",
        "use backend='hccl' (npu-manual) or transfer_to_npu (npu-auto)",
        _NPU_BOTH,
        True,
    ),
    Rule(
        "MA302",
        "torch-cuda-api",
        _E,
        "a torch.cuda API call without transfer_to_npu",
        "use torch_npu.npu.<same name>",
        _NPU_BOTH,
        True,
    ),
    Rule(
        "MA303",
        "cuda-method",
        _E,
        "a .cuda() call without transfer_to_npu",
        "use .npu() (npu-manual) or transfer_to_npu (npu-auto)",
        _NPU_BOTH,
        True,
    ),
    Rule(
        "MA304",
        "cuda-device-string",
        _E,
        "a 'cuda' device string without transfer_to_npu",
        "use 'npu' (npu-manual) or transfer_to_npu (npu-auto)",
        _NPU_BOTH,
        True,
    ),
    Rule(
        "MA305",
        "missing-torch-npu-import",
        _E,
        "torch is imported but torch_npu is not: NPU devices are unknown to torch",
        "add `import torch_npu` after the first torch import",
        _NPU_BOTH,
        True,
    ),
    Rule(
        "MA306",
        "is-cuda-attribute",
        _E,
        "a .is_cuda test without transfer_to_npu",
        "use .is_npu",
        _NPU_BOTH,
        True,
    ),
    Rule(
        "MA307",
        "integer-device",
        _E,
        "a bare integer device (.to(local_rank)) is a CUDA index: without transfer_to_npu it "
        "fails on Ascend",
        "name the device: .to(f'npu:{local_rank}')",
        _NPU_BOTH,
        True,
    ),
    # not covered by transfer_to_npu
    Rule(
        "MA310",
        "cuda-type-compare",
        _W,
        "a comparison with 'cuda': transfer_to_npu does not patch torch.device(...).type "
        "or strings, so the test keeps seeing cuda",
        "compare with 'npu'",
        _NPU_MANUAL,
        True,
    ),
    Rule(
        "MA311",
        "cuda-only-api",
        _E,
        "a CUDA API with no Ascend mapping (nvtx, nccl, comm, jiterator, sdp toggles, ...)",
        "remove it or guard it (torch_npu.npu.mstx replaces nvtx ranges)",
        (),
        True,
    ),
    Rule(
        "MA312",
        "nccl-string-compare",
        _W,
        "a comparison with 'nccl': transfer_to_npu leaves strings alone",
        "compare with 'hccl'",
        _NPU_MANUAL,
        True,
    ),
    Rule(
        "MA313",
        "nccl-availability-test",
        _E,
        "dist.is_nccl_available() is False on Ascend, also with transfer_to_npu: the script "
        "falls back to gloo, which cannot reduce NPU tensors",
        "test dist.is_hccl_available() (torch_npu adds it to torch.distributed)",
        _NPU_MANUAL,
        True,
    ),
    # blockers: never auto-fixed
    Rule(
        "MA320",
        "custom-cuda-extension",
        _E,
        "a custom CUDA/C++ extension must be rewritten for Ascend (OpPlugin / Ascend C)",
        "port the operator, or use an existing torch_npu operator",
        (),
        True,
    ),
    Rule(
        "MA321",
        "apex-fused-kernel",
        _E,
        "apex FusedAdam / amp_C kernels have no automatic Ascend migration",
        "use torch.optim.AdamW (or torch_npu's NpuFused* optimizers); remove amp_C",
        (),
        True,
    ),
    Rule(
        "MA327",
        "apex",
        _E,
        "apex (amp, parallel.DistributedDataParallel, fused kernels) has no Ascend build",
        "use torch.autocast(device_type='npu') and torch_npu.npu.amp.GradScaler for apex amp, "
        "torch.nn.parallel.DistributedDataParallel for apex DDP, torch.optim for fused "
        "optimizers",
        (),
        True,
    ),
    Rule(
        "MA322",
        "triton-kernel",
        _E,
        "Triton kernels do not run on Ascend NPUs",
        "replace the kernel with torch / torch_npu operators",
        (),
        True,
    ),
    Rule(
        "MA323",
        "cuda-python-library",
        _E,
        "cupy / numba.cuda / pycuda have no Ascend backend",
        "replace with torch / numpy code",
        (),
        True,
    ),
    Rule(
        "MA324",
        "jit-script",
        _W,
        "torch.jit.script is disabled (identity) by transfer_to_npu",
        "drop the jit.script call or expect eager execution",
        (),
        True,
    ),
    Rule(
        "MA325",
        "channels-last",
        _W,
        "channels_last memory format is not supported on Ascend",
        "use contiguous tensors (drop memory_format=torch.channels_last)",
        (),
        True,
    ),
    Rule(
        "MA326",
        "fp64-on-device",
        _W,
        "float64 is not supported on the NPU (transfer_to_npu maps DoubleTensor to float32)",
        "use float32 on the device",
        (),
        True,
    ),
    Rule(
        "MA328",
        "torch-compile",
        _W,
        "torch.compile's default backend (inductor) does not compile for Ascend NPUs",
        "use torchair's NPU backend (torch.compile(model, backend=torchair.get_npu_backend())) "
        "or run eagerly",
        (),
        True,
    ),
)
