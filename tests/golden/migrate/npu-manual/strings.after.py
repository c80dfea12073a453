import torch
import torch_npu
import torch.distributed as dist
from torch_npu.npu.amp import GradScaler, autocast


def step(model, x, rank, backend):
    device = torch.device(f"npu:{rank}")
    if device.type == "npu" and backend == "hccl":
        print("gpu run")
    scaler = GradScaler()
    with autocast():
        loss = model(x.to(device)).sum()
    with torch_npu.npu.amp.autocast(enabled=False):
        pass
    scaler.scale(loss).backward()
    torch.cuda.nvtx.range_push("step")  # no Ascend mapping: left for a hand
    return dist.get_rank(), torch_npu.npu.current_device()
