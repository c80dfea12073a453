"""torchrun env-var style with pathlib checkpoints, `import torch.cuda as cuda`, map_location variants."""
import os
from pathlib import Path

import torch  # expect: MA305
import torch.cuda as cuda
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

CKPT_DIR = Path("checkpoints")  # expect: MA102


def setup():
    dist.init_process_group("nccl" if cuda.is_available() else "gloo")  # expect: MA210, MA301, MA302
    local_rank = int(os.environ["LOCAL_RANK"])  # expect: MA211
    if cuda.is_available():  # expect: MA302
        cuda.set_device(local_rank)  # expect: MA302
    return local_rank


def load(model, local_rank):
    path = CKPT_DIR / "model.pt"
    if not path.exists():
        return
    if cuda.is_available():  # expect: MA302
        state = torch.load(path, map_location={"cuda:0": "cuda:%d" % local_rank})  # expect: MA304
    else:
        state = torch.load(path, map_location=lambda storage, loc: storage)
    model.load_state_dict(state)


def main():
    local_rank = setup()
    device = torch.device("cuda", local_rank) if cuda.is_available() else torch.device("cpu")  # expect: MA302, MA304
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 2).to(device)
    load(model, local_rank)
    ddp_model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)  # expect: MA310
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=0.01)
    x = torch.randn(8, 8).to(device, non_blocking=True)
    y = torch.randint(0, 2, (8,)).to(device, non_blocking=True)
    optimizer.zero_grad()
    torch.nn.functional.cross_entropy(ddp_model(x), y).backward()
    optimizer.step()
    if cuda.is_available():  # expect: MA302
        cuda.synchronize()  # expect: MA302
    if int(os.environ["LOCAL_RANK"]) == 0:  # expect: MA211
        CKPT_DIR.mkdir(parents=True)
        torch.save(model.state_dict(), CKPT_DIR / "model.pt")  # expect: MA206
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
